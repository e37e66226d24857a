package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"github.com/chopin-desktop/chopin/textrule"
)

// Channel is one document's catalog entry: its identity, title, routes and
// lifecycle. (The spec calls documents channels; so does the schema.)
type Channel struct {
	ID               string
	RepositoryNodeID string
	Repository       string // owner/name
	Title            string
	Slug             string // canonical
	ParentSlug       string // the parent's canonical slug, for a child document
	ArchivedAt       int64  // unix ms; 0 while active
	CreatedAt        int64
	UpdatedAt        int64

	Description         *string
	DescriptionRevision int64
	ParentChannelID     string
	CreationSource      string
}

// Archived reports whether the document is archived.
func (c Channel) Archived() bool { return c.ArchivedAt != 0 }

// Creation sources.
const (
	SourceBrowser  = "browser"
	SourceMCP      = "mcp"
	SourceResearch = "research"
)

// MaxTitleLength bounds a title, in Unicode code points after trimming.
const MaxTitleLength = 120

// normalizeTitle trims and NFC-normalises a title and checks its length and
// its characters (textrule.Title): every way a title comes in (creation,
// rename, import, MCP) passes here.
func normalizeTitle(title string) (string, error) {
	t := strings.TrimSpace(norm.NFC.String(title))
	if n := utf8.RuneCountInString(t); n < 1 || n > MaxTitleLength {
		return "", invalid("invalid-title", "a title must be 1 to %d characters after trimming (got %d)", MaxTitleLength, n)
	}
	if err := textrule.Title(t); err != nil {
		return "", invalid("invalid-title", "a title %v; write it on one line of plain text, with at least one visible character", err)
	}
	return t, nil
}

const channelColumns = `c.id, c.repository_node_id, r.owner || '/' || r.name, c.title, c.slug,
	coalesce(p.slug, ''), coalesce(c.archived_at, 0), c.created_at, c.updated_at,
	c.description, c.description_revision, coalesce(c.parent_channel_id, ''), c.creation_source`

const channelJoins = ` JOIN repositories r ON r.node_id = c.repository_node_id
	LEFT JOIN channels p ON p.id = c.parent_channel_id `

const channelFrom = ` FROM channels c` + channelJoins

func scanChannel(row interface{ Scan(...any) error }) (Channel, error) {
	var c Channel
	var desc sql.NullString
	err := row.Scan(&c.ID, &c.RepositoryNodeID, &c.Repository, &c.Title, &c.Slug, &c.ParentSlug,
		&c.ArchivedAt, &c.CreatedAt, &c.UpdatedAt, &desc, &c.DescriptionRevision, &c.ParentChannelID, &c.CreationSource)
	if desc.Valid {
		c.Description = &desc.String
	}
	return c, err
}

// Channel reads a document by ID, archived or not.
func (s *Store) Channel(ctx context.Context, id string) (Channel, error) {
	return channelByID(ctx, s.read, id)
}

func channelByID(ctx context.Context, q querier, id string) (Channel, error) {
	c, err := scanChannel(q.QueryRowContext(ctx, `SELECT `+channelColumns+channelFrom+`WHERE c.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Channel{}, notFound("channel-not-found", "no document has the ID %s", id)
	}
	if err != nil {
		return Channel{}, fmt.Errorf("read channel %s: %w", id, err)
	}
	return c, nil
}

// ChannelBySlug reads a document of a repository by its canonical slug or
// any historical alias, archived or not.
func (s *Store) ChannelBySlug(ctx context.Context, repositoryNodeID, slug string) (Channel, error) {
	c, err := scanChannel(s.read.QueryRowContext(ctx, `SELECT `+channelColumns+channelFrom+`
		JOIN channel_slugs cs ON cs.channel_id = c.id
		WHERE cs.repository_node_id = ? AND cs.slug = ?`, repositoryNodeID, norm.NFC.String(strings.ToLower(slug))))
	if errors.Is(err, sql.ErrNoRows) {
		return Channel{}, notFound("channel-not-found", "no document has the address %q", slug)
	}
	if err != nil {
		return Channel{}, fmt.Errorf("read channel by slug: %w", err)
	}
	return c, nil
}

// CreateChannel creates a document from the browser: a fresh identity every
// time. An empty title gets a generated one ("Untitled plan", then
// "Untitled plan 2", ...).
func (s *Store) CreateChannel(ctx context.Context, repositoryNodeID, title string) (Channel, error) {
	var c Channel
	err := s.inCatalogTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		c, err = createChannel(ctx, tx, s.nowMS(), newChannel{
			repositoryNodeID: repositoryNodeID,
			id:               ChannelID(repositoryNodeID, uuid.NewString()),
			title:            title,
			source:           SourceBrowser,
		})
		return err
	})
	return c, err
}

// CreateChannelIdempotent creates a document whose identity derives from the
// caller's idempotency key. Repeating the call with the same key and the same
// input returns the same document (created is false); the same key with a
// different input is a conflict.
func (s *Store) CreateChannelIdempotent(ctx context.Context, repositoryNodeID, key, title, source string) (c Channel, created bool, err error) {
	if key == "" || len(key) > 256 {
		return Channel{}, false, invalid("invalid-idempotency-key", "an idempotency key must be 1 to 256 bytes")
	}
	sum := sha256.Sum256([]byte(source + "\x00" + norm.NFC.String(strings.TrimSpace(title))))
	inputHash := hex.EncodeToString(sum[:])
	id := ChannelID(repositoryNodeID, key)
	err = s.inCatalogTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		existing, err := channelByID(ctx, tx, id)
		if err == nil {
			var hash string
			if err := tx.QueryRowContext(ctx, `SELECT coalesce(creation_input_hash, '') FROM channels WHERE id = ?`, id).Scan(&hash); err != nil {
				return err
			}
			if hash != inputHash {
				return conflict("idempotency-conflict", "this idempotency key already created a document from different input")
			}
			c = existing
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		c, err = createChannel(ctx, tx, s.nowMS(), newChannel{
			repositoryNodeID: repositoryNodeID, id: id, title: title, source: source,
			idempotencyKey: key, inputHash: inputHash,
		})
		created = err == nil
		return err
	})
	return c, created, err
}

type newChannel struct {
	repositoryNodeID, id, title, source string
	idempotencyKey, inputHash           string
}

func createChannel(ctx context.Context, tx *sql.Tx, now int64, n newChannel) (Channel, error) {
	title := strings.TrimSpace(n.title)
	var err error
	if title == "" && n.title == "" {
		title, err = generateTitle(ctx, tx, n.repositoryNodeID)
	} else {
		title, err = normalizeTitle(n.title)
	}
	if err != nil {
		return Channel{}, err
	}
	if err := checkTitleFree(ctx, tx, n.repositoryNodeID, "", title); err != nil {
		return Channel{}, err
	}
	slug, err := freeSlug(ctx, tx, n.repositoryNodeID, "", Slug(title))
	if err != nil {
		return Channel{}, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO channels (id, repository_node_id, title, title_key, slug, search_text,
		created_at, updated_at, creation_source, idempotency_key, creation_input_hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, nullif(?, ''), nullif(?, ''))`,
		n.id, n.repositoryNodeID, title, foldKey(title), slug, searchText(title, nil),
		now, now, n.source, n.idempotencyKey, n.inputHash)
	if err != nil {
		if isForeignKeyError(err) {
			return Channel{}, notFound("repository-not-found", "that repository is not registered")
		}
		return Channel{}, fmt.Errorf("insert channel: %w", err)
	}
	if err := addSlug(ctx, tx, n.repositoryNodeID, slug, n.id, now); err != nil {
		return Channel{}, err
	}
	return channelByID(ctx, tx, n.id)
}

func generateTitle(ctx context.Context, tx *sql.Tx, repositoryNodeID string) (string, error) {
	return freeTitle(ctx, tx, repositoryNodeID, "Untitled plan")
}

// freeTitle returns base, or base 2, base 3, ... : the first title no other
// document of the repository has. A number that would take the title over
// MaxTitleLength shortens base to make room.
func freeTitle(ctx context.Context, tx *sql.Tx, repositoryNodeID, base string) (string, error) {
	for n := 1; ; n++ {
		title := base
		if n > 1 {
			suffix := " " + strconv.Itoa(n)
			runes := []rune(base)
			title = strings.TrimSpace(string(runes[:min(len(runes), MaxTitleLength-len(suffix))])) + suffix
		}
		err := checkTitleFree(ctx, tx, repositoryNodeID, "", title)
		if !errors.Is(err, ErrConflict) {
			return title, err
		}
	}
}

// CreateChannelFreeTitle creates a document as CreateChannel does, titled
// title or, when another document of the repository has it, the first of
// "title 2", "title 3", ... that none has, as an empty title becomes
// "Untitled plan 2". taken is the title asked for when another document
// had it, else "".
func (s *Store) CreateChannelFreeTitle(ctx context.Context, repositoryNodeID, title string) (c Channel, taken string, err error) {
	err = s.inCatalogTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		want, err := normalizeTitle(title)
		if err != nil {
			return err
		}
		free, err := freeTitle(ctx, tx, repositoryNodeID, want)
		if err != nil {
			return err
		}
		if free != want {
			taken = want
		}
		c, err = createChannel(ctx, tx, s.nowMS(), newChannel{
			repositoryNodeID: repositoryNodeID,
			id:               ChannelID(repositoryNodeID, uuid.NewString()),
			title:            free,
			source:           SourceBrowser,
		})
		return err
	})
	return c, taken, err
}

// checkTitleFree refuses a title that another document of the repository
// already has in any letter case or Unicode composition.
func checkTitleFree(ctx context.Context, tx *sql.Tx, repositoryNodeID, selfID, title string) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT id FROM channels WHERE repository_node_id = ? AND title_key = ? AND id != ?`,
		repositoryNodeID, foldKey(title), selfID).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("check title: %w", err)
	}
	return conflict("title-taken", "another document in this repository is already titled %q", title)
}

// freeSlug returns base, or base-2, base-3, ... : the first slug that no
// other document of the repository holds, canonically or as an alias. A
// document may take back one of its own former slugs.
func freeSlug(ctx context.Context, tx *sql.Tx, repositoryNodeID, selfID, base string) (string, error) {
	for n := 1; ; n++ {
		slug := base
		if n > 1 {
			slug = base + "-" + strconv.Itoa(n)
		}
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT channel_id FROM channel_slugs WHERE repository_node_id = ? AND slug = ?`,
			repositoryNodeID, slug).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && owner == selfID) {
			return slug, nil
		}
		if err != nil {
			return "", fmt.Errorf("check slug: %w", err)
		}
	}
}

func addSlug(ctx context.Context, tx *sql.Tx, repositoryNodeID, slug, channelID string, now int64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO channel_slugs (repository_node_id, slug, channel_id, created_at)
		VALUES (?, ?, ?, ?) ON CONFLICT (repository_node_id, slug) DO NOTHING`, repositoryNodeID, slug, channelID, now)
	if err != nil {
		return fmt.Errorf("record slug: %w", err)
	}
	return nil
}

func searchText(title string, description *string) string {
	if description == nil {
		return foldKey(title)
	}
	return foldKey(title) + "\n" + foldKey(*description)
}

// RenameChannel gives a document a new title and the slug derived from it.
// The old slug stays an alias for good. Submitting the current title changes
// nothing (changed is false). An archived document cannot be renamed.
func (s *Store) RenameChannel(ctx context.Context, id, title string) (c Channel, changed bool, err error) {
	title, err = normalizeTitle(title)
	if err != nil {
		return Channel{}, false, err
	}
	err = s.inCatalogTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		c, err = channelByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if c.Archived() {
			return conflict("channel-archived", "this document is archived; restore it to rename it")
		}
		if c.Title == title {
			return nil
		}
		if err := checkTitleFree(ctx, tx, c.RepositoryNodeID, c.ID, title); err != nil {
			return err
		}
		slug := c.Slug
		if Slug(title) != Slug(c.Title) {
			if slug, err = freeSlug(ctx, tx, c.RepositoryNodeID, c.ID, Slug(title)); err != nil {
				return err
			}
		}
		now := s.nowMS()
		if _, err := tx.ExecContext(ctx, `UPDATE channels SET title = ?, title_key = ?, slug = ?, search_text = ?, updated_at = ?
			WHERE id = ?`, title, foldKey(title), slug, searchText(title, c.Description), now, id); err != nil {
			return fmt.Errorf("rename channel: %w", err)
		}
		if err := addSlug(ctx, tx, c.RepositoryNodeID, slug, c.ID, now); err != nil {
			return err
		}
		changed = true
		c, err = channelByID(ctx, tx, id)
		return err
	})
	return c, changed, err
}

// ArchiveChannel archives a document. Archiving an archived document changes
// nothing. Only the metadata and activity time change: no revision or
// sequence counter moves.
func (s *Store) ArchiveChannel(ctx context.Context, id string) (c Channel, changed bool, err error) {
	return s.setArchived(ctx, id, true)
}

// RestoreChannel lifts an archive; restoring an active document changes nothing.
func (s *Store) RestoreChannel(ctx context.Context, id string) (c Channel, changed bool, err error) {
	return s.setArchived(ctx, id, false)
}

func (s *Store) setArchived(ctx context.Context, id string, archive bool) (c Channel, changed bool, err error) {
	err = s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		c, err = channelByID(ctx, tx, id)
		if err != nil || c.Archived() == archive {
			return err
		}
		now := s.nowMS()
		archivedAt := sql.NullInt64{Int64: now, Valid: archive}
		if _, err := tx.ExecContext(ctx, `UPDATE channels SET archived_at = ?, updated_at = ? WHERE id = ?`,
			archivedAt, now, id); err != nil {
			return fmt.Errorf("archive channel: %w", err)
		}
		changed = true
		c, err = channelByID(ctx, tx, id)
		return err
	})
	return c, changed, err
}

// DeleteChannel deletes an archived document and, by cascade, everything it
// owns, in one transaction. An active document must be archived first.
func (s *Store) DeleteChannel(ctx context.Context, id string) error {
	return s.inCatalogTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		c, err := channelByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if !c.Archived() {
			return conflict("channel-not-archived", "archive this document before deleting it")
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channels WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete channel: %w", err)
		}
		return nil
	})
}

// Listing limits.
const (
	DefaultListLimit = 50
	MaxListLimit     = 100
)

// ListOptions select a page of a repository's documents.
type ListOptions struct {
	Query           string // case-insensitive, on title or description
	Cursor          string // from the previous page's NextCursor
	Limit           int    // 1..100; 0 means the default
	IncludeArchived bool
}

// ChannelPage is one page of a listing. NextCursor is empty on the last page.
type ChannelPage struct {
	Channels   []Channel
	NextCursor string
}

// cursor is the position after the last row of a page, bound to the search
// that produced it.
type cursor struct {
	UpdatedAt int64  `json:"u"`
	ID        string `json:"i"`
	Search    string `json:"s"`
}

func searchFingerprint(query string, includeArchived bool) string {
	sum := sha256.Sum256([]byte(strconv.FormatBool(includeArchived) + "\x00" + query))
	return hex.EncodeToString(sum[:8])
}

// ListChannels lists a repository's documents, most recently updated first,
// the ID breaking ties, so that paging is stable while documents change.
func (s *Store) ListChannels(ctx context.Context, repositoryNodeID string, opt ListOptions) (ChannelPage, error) {
	limit := opt.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 1 || limit > MaxListLimit {
		return ChannelPage{}, invalid("invalid-limit", "limit must be from 1 to %d", MaxListLimit)
	}
	query := foldKey(strings.TrimSpace(opt.Query))
	fingerprint := searchFingerprint(query, opt.IncludeArchived)
	after := cursor{UpdatedAt: 1<<63 - 1, ID: "~"} // before every real position
	if opt.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(opt.Cursor)
		if err != nil || json.Unmarshal(raw, &after) != nil || after.ID == "" {
			return ChannelPage{}, invalid("invalid-cursor", "the cursor is not one this server gave out")
		}
		if after.Search != fingerprint {
			return ChannelPage{}, invalid("invalid-cursor", "the cursor belongs to another search; start again without it")
		}
	}
	// The page is chosen first, from the search index when it narrows the
	// catalog to a few candidates, else from channels alone in recency order
	// (covered by channels_recency); only its rows are joined for their
	// repository and parent.
	candidates, err := s.indexCandidates(ctx, query)
	if err != nil {
		return ChannelPage{}, err
	}
	pageQuery, args := listPageByRecency, []any{repositoryNodeID, opt.IncludeArchived, query, query, after.UpdatedAt, after.ID, limit + 1}
	if candidates != "" {
		pageQuery, args = listPageFromIndex, []any{candidates, repositoryNodeID, opt.IncludeArchived, query, after.UpdatedAt, after.ID, limit + 1}
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+channelColumns+`
		FROM (`+pageQuery+`) page
		JOIN channels c ON c.id = page.id `+channelJoins+`
		ORDER BY c.updated_at DESC, c.id DESC`, args...)
	if err != nil {
		return ChannelPage{}, fmt.Errorf("list channels: %w", err)
	}
	defer rows.Close()
	page := ChannelPage{Channels: make([]Channel, 0, limit)}
	for rows.Next() {
		c, err := scanChannel(rows)
		if err != nil {
			return ChannelPage{}, fmt.Errorf("list channels: %w", err)
		}
		page.Channels = append(page.Channels, c)
	}
	if err := rows.Err(); err != nil {
		return ChannelPage{}, fmt.Errorf("list channels: %w", err)
	}
	if len(page.Channels) > limit {
		page.Channels = page.Channels[:limit]
		last := page.Channels[limit-1]
		raw, _ := json.Marshal(cursor{UpdatedAt: last.UpdatedAt, ID: last.ID, Search: fingerprint})
		page.NextCursor = base64.RawURLEncoding.EncodeToString(raw)
	}
	return page, nil
}

func isForeignKeyError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}
