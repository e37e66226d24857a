package app

// The store and the rooms as the MCP server's catalog, plans, Chat and
// images: the caller acts as a person would, under its client's name.

import (
	"context"
	"errors"
	"fmt"

	"github.com/chopin-desktop/chopin/mcpserver"
	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

var (
	_ mcpserver.Catalog = mcpStore{}
	_ mcpserver.Plans   = mcpStore{}
	_ mcpserver.Chat    = mcpStore{}
	_ mcpserver.Images  = mcpStore{}
)

// mcpStore is what mcpserver needs, over the store and the rooms.
type mcpStore struct{ a *App }

func (m mcpStore) document(ch store.Channel) mcpserver.Document {
	d := mcpserver.Document{ID: ch.ID, Title: ch.Title, URL: documentPath(ch), Repository: ch.Repository, Description: ch.Description}
	if ch.Archived() {
		d.ArchivedAt = rfc3339(ch.ArchivedAt)
	}
	return d
}

func (m mcpStore) Repositories(ctx context.Context) ([]mcpserver.Repository, error) {
	repos, err := m.a.store.Repositories(ctx)
	out := make([]mcpserver.Repository, len(repos))
	for i, r := range repos {
		out[i] = mcpserver.Repository{Name: r.FullName(), Path: r.Path}
	}
	return out, err
}

// repository finds a repository by owner/name.
func (m mcpStore) repository(ctx context.Context, name string) (store.Repository, error) {
	owner, repo, ok := cutRepository(name)
	if !ok {
		return store.Repository{}, &mcpserver.Refusal{Code: mcpserver.CodeRepositoryNotFound,
			Message: fmt.Sprintf("%q is not a repository name: name it owner/name, as list_repositories does.", name)}
	}
	return m.a.store.RepositoryByName(ctx, owner, repo)
}

func cutRepository(name string) (owner, repo string, ok bool) {
	for i := 0; i < len(name); i++ {
		if name[i] == '/' {
			owner, repo = name[:i], name[i+1:]
			return owner, repo, owner != "" && repo != "" && len(name) <= 256
		}
	}
	return "", "", false
}

func (m mcpStore) Documents(ctx context.Context, q mcpserver.ListQuery) (mcpserver.Listing, error) {
	repo, err := m.repository(ctx, q.Repository)
	if err != nil {
		return mcpserver.Listing{}, err
	}
	page, err := m.a.store.ListChannels(ctx, repo.NodeID, store.ListOptions{Query: q.Query, Cursor: q.Cursor, IncludeArchived: q.IncludeArchived})
	if err != nil {
		return mcpserver.Listing{}, err
	}
	out := mcpserver.Listing{Documents: make([]mcpserver.Document, len(page.Channels)), NextCursor: page.NextCursor}
	for i, ch := range page.Channels {
		out.Documents[i] = m.document(ch)
	}
	return out, nil
}

func (m mcpStore) Document(ctx context.Context, id string) (mcpserver.Document, error) {
	ch, err := m.a.store.Channel(ctx, id)
	return m.document(ch), err
}

func (m mcpStore) DocumentAt(ctx context.Context, owner, repository, slug string) (mcpserver.Document, error) {
	repo, err := m.a.store.RepositoryByName(ctx, owner, repository)
	if errors.Is(err, store.ErrNotFound) {
		return mcpserver.Document{}, &mcpserver.Refusal{Code: mcpserver.CodeDocumentUnavailable,
			Message: fmt.Sprintf("No document is at /documents/%s/%s/%s: the repository %s/%s is not registered.", owner, repository, slug, owner, repository)}
	}
	if err != nil {
		return mcpserver.Document{}, err
	}
	ch, err := m.a.store.ChannelBySlug(ctx, repo.NodeID, slug)
	return m.document(ch), err
}

func (m mcpStore) Create(ctx context.Context, c mcpserver.Creation) (mcpserver.Document, bool, error) {
	repo, err := m.repository(ctx, c.Repository)
	if err != nil {
		return mcpserver.Document{}, false, err
	}
	ch, created, err := m.a.store.CreateDocument(ctx, store.DocumentCreation{RepositoryNodeID: repo.NodeID,
		Key: c.Key, Title: c.Title, Plan: c.Plan, Brief: c.Brief})
	if err == nil {
		// spec/channels.md: MCP creation or replay schedules the description
		// at once (it waits, paused, for a Planner to attach).
		go m.a.describer.ensure(ch.ID, 0)
	}
	return m.document(ch), !created, err
}

func (m mcpStore) Rename(ctx context.Context, id, title string) (mcpserver.Document, error) {
	ch, changed, err := m.a.store.RenameChannel(ctx, id, title)
	if err != nil {
		return mcpserver.Document{}, err
	}
	if changed {
		m.a.channelChanged(ch)
	}
	return m.document(ch), nil
}

func (m mcpStore) Archive(ctx context.Context, id string) (mcpserver.Document, error) {
	return m.transition(ctx, id, m.a.store.ArchiveChannel)
}

func (m mcpStore) Restore(ctx context.Context, id string) (mcpserver.Document, error) {
	return m.transition(ctx, id, m.a.store.RestoreChannel)
}

func (m mcpStore) transition(ctx context.Context, id string, fn func(ctx context.Context, id string) (store.Channel, bool, error)) (mcpserver.Document, error) {
	ch, changed, err := fn(ctx, id)
	if err != nil {
		return mcpserver.Document{}, err
	}
	if changed {
		m.a.channelChanged(ch)
	}
	return m.document(ch), nil
}

// withRoom runs fn on the document's room.
func (m mcpStore) withRoom(ctx context.Context, id string, fn func(*room.Room) error) error {
	ch, err := m.a.store.Channel(ctx, id)
	if err != nil {
		return err
	}
	return m.a.hub.Do(ctx, m.a.roomChannel(ch), fn)
}

func (m mcpStore) View(ctx context.Context, id string) (room.PlanView, error) {
	var v room.PlanView
	err := m.withRoom(ctx, id, func(r *room.Room) error { v = r.View(); return nil })
	return v, err
}

func (m mcpStore) Brief(ctx context.Context, id string) (string, error) {
	return m.a.store.DocumentBrief(ctx, id)
}

// Replace edits the plan as a person's PUT does, and says in Chat who made
// the change and what it changed: the edit itself carries no author.
func (m mcpStore) Replace(ctx context.Context, id string, revision int64, plan, author string) (int64, error) {
	var now int64
	err := m.withRoom(ctx, id, func(r *room.Room) error {
		before := r.View().Source
		var err error
		now, err = r.ReplaceText(room.WithAuthor(ctx, room.Author{Kind: room.AuthorMCP, Name: author}), revision, plan)
		if err == nil && now != revision { // the same text changes nothing
			r.Notice(ctx, fmt.Sprintf("%s replaced the plan over MCP (revision %d): %s.",
				author, now, room.ChangeSummary(before, r.View().Source)))
		}
		return err
	})
	return now, err
}

func (m mcpStore) UpdateReplay(ctx context.Context, id, key string) (string, int64, bool, error) {
	return m.a.store.PlanUpdateReplay(ctx, id, key)
}

func (m mcpStore) RecordUpdate(ctx context.Context, id, key, hash string, revision int64) error {
	return m.a.store.RecordPlanUpdate(ctx, id, key, hash, revision)
}

func (m mcpStore) Invoke(ctx context.Context, id, author, instruction string, reqs []room.ReferenceRequest) (string, error) {
	var msg room.Message
	err := m.withRoom(ctx, id, func(r *room.Room) error {
		var err error
		msg, err = r.Invoke(ctx, author, instruction, reqs)
		return err
	})
	return msg.ID, err
}

func (m mcpStore) SaveImage(ctx context.Context, id string, img picture.Image) error {
	return m.a.store.SaveImage(ctx, id, store.Image{SHA256: img.SHA256, Ext: img.Ext, MimeType: img.MimeType,
		Width: img.Width, Height: img.Height, Data: img.Data})
}
