package app

// A plan's history (store/history.go): the versions a document keeps, each
// rebuilt from the nearest snapshot and the changes after it; restore of
// one as a new change; and the background pruning that keeps the detail
// for the configured window and snapshots beyond it.

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/mcpserver"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// Paging of the versions list.
const (
	defaultVersionsPage = 50
	maxVersionsPage     = 200
)

// historyPolicy is the configured retention.
func (a *App) historyPolicy() store.HistoryPolicy {
	return store.HistoryPolicy{DetailDays: a.cfg.HistoryDetailDays, DetailChanges: a.cfg.HistoryDetailChanges,
		SnapshotEvery: int64(a.cfg.HistorySnapshotHours) * 3_600_000, Snapshots: a.cfg.HistorySnapshots}
}

// versions is a page of a document's kept versions, newest first, before
// the version before (all when 0), each with a summary of what it changed
// from the kept version before it.
func (a *App) versions(ctx context.Context, channelID string, before int64, limit int) ([]room.Version, error) {
	entries, err := a.store.History(ctx, channelID, before, limit+1) // the one more: the first's predecessor
	if err != nil {
		return nil, err
	}
	out := make([]room.Version, 0, min(len(entries), limit))
	if len(entries) == 0 {
		return out, nil
	}
	// Texts oldest first: the predecessor's, then each of the page's,
	// applying a change where it follows the text just rebuilt.
	page := entries[:min(len(entries), limit)]
	var prev string
	havePrev := false
	if len(entries) > limit {
		if prev, err = a.versionText(ctx, channelID, entries[limit].Version); err == nil {
			havePrev = true
		}
	}
	cur, curVersion := prev, int64(-1)
	if havePrev {
		curVersion = entries[limit].Version
	}
	summaries := make([]string, len(page))
	for i := len(page) - 1; i >= 0; i-- {
		e := page[i]
		var text string
		var err error
		if e.Changes != nil && curVersion >= 0 && e.Version == curVersion+1 {
			text, err = room.ApplyChanges(cur, e.Changes)
		} else {
			text, err = a.versionText(ctx, channelID, e.Version)
		}
		switch {
		case err != nil:
			summaries[i] = "cannot be rebuilt"
			curVersion = -1
			continue
		case curVersion < 0:
			summaries[i] = "the earliest version kept"
		default:
			summaries[i] = room.ChangeSummary(cur, text)
		}
		cur, curVersion = text, e.Version
	}
	for i, e := range page {
		out = append(out, room.Version{Version: e.Version, Time: e.At, Author: room.Author(e.Author), Summary: summaries[i]})
	}
	return out, nil
}

// versionText is the plan's text at a kept version, or a not-found refusal
// naming the nearest kept versions.
func (a *App) versionText(ctx context.Context, channelID string, version int64) (string, error) {
	b, err := a.store.HistoryBaseOf(ctx, channelID, version)
	if err != nil {
		return "", err
	}
	kept := b.Found && (b.Snapshot || len(b.Changes) > 0 && b.Changes[len(b.Changes)-1].Version == version)
	if kept && !b.Snapshot {
		// Every change from the snapshot through the version must be there.
		for i, c := range b.Changes {
			if c.Version != b.Version+int64(i)+1 || c.Changes == nil {
				kept = false
				break
			}
		}
	}
	if !kept {
		return "", a.versionGone(ctx, channelID, version)
	}
	text := b.Source
	for _, c := range b.Changes {
		if text, err = room.ApplyChanges(text, c.Changes); err != nil {
			return "", fmt.Errorf("rebuild version %d: %w", version, err)
		}
	}
	return text, nil
}

// versionGone is the refusal of a version the history does not keep.
func (a *App) versionGone(ctx context.Context, channelID string, version int64) error {
	before, after, err := a.store.HistoryNeighbours(ctx, channelID, version)
	if err != nil {
		return err
	}
	msg := "The history does not keep version " + strconv.FormatInt(version, 10) + " of this plan"
	switch {
	case before > 0 && after > 0:
		msg += fmt.Sprintf(": older detail is pruned to snapshots. The nearest kept versions are %d and %d.", before, after)
	case before > 0:
		msg += fmt.Sprintf(". The newest kept version is %d.", before)
	case after > 0:
		msg += fmt.Sprintf(": older detail is pruned. The oldest kept version is %d.", after)
	default:
		msg += "."
	}
	return &fault.Error{Kind: fault.NotFound, Code: "version-not-found", Message: msg + " List them with GET …/versions."}
}

// versionParam reads the route's :version.
func versionParam(c echo.Context) (int64, error) {
	v, err := strconv.ParseInt(c.Param("version"), 10, 64)
	if err != nil || v < 0 {
		return 0, badRequest("invalid-version", "The version "+strconv.Quote(c.Param("version"))+" is not a whole number of 0 or more.")
	}
	return v, nil
}

func (a *App) handleVersions(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	var before int64
	limit := defaultVersionsPage
	if s := c.QueryParam("before"); s != "" {
		if before, err = strconv.ParseInt(s, 10, 64); err != nil || before < 1 {
			return badRequest("invalid-argument", "before must be a version of 1 or more: the page holds the versions before it.")
		}
	}
	if s := c.QueryParam("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxVersionsPage {
			return badRequest("invalid-argument", fmt.Sprintf("limit must be a whole number from 1 to %d.", maxVersionsPage))
		}
	}
	vs, err := a.versions(c.Request().Context(), ch.ID, before, limit)
	if err != nil {
		return err
	}
	res := struct {
		Versions []room.Version `json:"versions"`
		Next     *int64         `json:"next,omitempty"` // the before of the next page
	}{Versions: vs}
	if len(vs) == limit && vs[len(vs)-1].Version > 0 {
		res.Next = &vs[len(vs)-1].Version
	}
	return c.JSON(http.StatusOK, res)
}

func (a *App) handleVersion(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	v, err := versionParam(c)
	if err != nil {
		return err
	}
	text, err := a.versionText(c.Request().Context(), ch.ID, v)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"version": v, "source": text})
}

// handleVersionMarkdown is a version's text as a Markdown file, for
// chopin export --version.
func (a *App) handleVersionMarkdown(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	v, err := versionParam(c)
	if err != nil {
		return err
	}
	text, err := a.versionText(c.Request().Context(), ch.ID, v)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(text))
}

func (a *App) handleVersionRestore(c echo.Context) error {
	if err := a.canWrite(c); err != nil {
		return err
	}
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	v, err := versionParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	text, err := a.versionText(ctx, ch.ID, v)
	if err != nil {
		return err
	}
	es, err := a.store.History(ctx, ch.ID, v+1, 1)
	if err != nil {
		return err
	}
	when := ""
	if len(es) == 1 {
		when = time.UnixMilli(es[0].At).Local().Format("2006-01-02 15:04")
		if time.UnixMilli(es[0].At).Local().Format(time.DateOnly) == time.Now().Format(time.DateOnly) {
			when = time.UnixMilli(es[0].At).Local().Format("15:04")
		}
	}
	return a.withRoom(c, func(_ store.Channel, r *room.Room) error {
		if _, err := r.Restore(ctx, a.identity(), v, when, text); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, r.Plan())
	})
}

// historyPruner prunes every document's history to the policy in the
// background: at start, then hourly. Not on any edit's path.
type historyPruner struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

const historyPruneEvery = time.Hour

func (a *App) startHistoryPruner() {
	a.pruner = &historyPruner{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(a.pruner.done)
		t := time.NewTimer(time.Minute) // after the start's own work
		defer t.Stop()
		for {
			select {
			case <-a.pruner.stop:
				return
			case <-t.C:
			}
			if err := a.pruneHistory(context.Background()); err != nil {
				a.log.Error("prune the plans' history", "err", err)
			}
			t.Reset(historyPruneEvery)
		}
	}()
}

func (a *App) stopHistoryPruner() {
	if a.pruner != nil {
		a.pruner.once.Do(func() { close(a.pruner.stop) })
		<-a.pruner.done
	}
}

// pruneHistory prunes every document with detail beyond the policy.
func (a *App) pruneHistory(ctx context.Context) error {
	policy := a.historyPolicy()
	due, err := a.store.HistoryToPrune(ctx, policy)
	if err != nil {
		return err
	}
	for id, through := range due {
		if a.pruner != nil {
			select {
			case <-a.pruner.stop:
				return nil
			default:
			}
		}
		if err := a.pruneDocument(ctx, id, through, policy); err != nil {
			a.log.Error("prune a plan's history", "channel", id, "err", err)
		}
	}
	return nil
}

// pruneDocument lets go of the detail of versions through through: of
// those, it keeps the last version of every SnapshotEvery period (and
// through itself, which the detail after it is rebuilt from) as snapshots,
// at most policy.Snapshots of them, newest kept.
func (a *App) pruneDocument(ctx context.Context, id string, through int64, policy store.HistoryPolicy) error {
	var rows []store.HistoryEntry // through and older, oldest first
	for before := through + 1; ; {
		page, err := a.store.History(ctx, id, before, 5000)
		if err != nil {
			return err
		}
		for _, e := range page {
			rows = append(rows, e)
		}
		if len(page) < 5000 {
			break
		}
		before = page[len(page)-1].Version
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Version < rows[j].Version })
	if len(rows) == 0 {
		return nil
	}
	// The versions kept: the last of each period, and through.
	every := max(policy.SnapshotEvery, 1)
	keep := map[int64]bool{through: true}
	for i, e := range rows {
		if i == len(rows)-1 || rows[i+1].At/every != e.At/every {
			keep[e.Version] = true
		}
	}
	kept := make([]int64, 0, len(keep))
	for v := range keep {
		kept = append(kept, v)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i] < kept[j] })
	p := store.HistoryPrune{Snapshots: map[int64]string{}, Through: through}
	if n := max(policy.Snapshots, 1); len(kept) > n {
		p.DropSnapshotsBefore = kept[len(kept)-n]
		kept = kept[len(kept)-n:]
	}
	p.Keep = kept
	// Texts of the kept versions that have none yet: walk from the first
	// row with a change.
	first := -1
	for i, e := range rows {
		if e.Changes != nil {
			first = i
			break
		}
	}
	if first >= 0 {
		start := rows[first].Version - 1
		text, err := a.versionText(ctx, id, start)
		if err != nil {
			// The detail cannot be rebuilt from anything kept: only
			// what already has a snapshot stays readable.
			a.log.Warn("a plan's history has changes without a text before them", "channel", id, "version", start, "err", err)
		} else {
			cur := start
			for _, e := range rows[first:] {
				if e.Changes == nil || e.Version != cur+1 {
					break
				}
				if text, err = room.ApplyChanges(text, e.Changes); err != nil {
					return fmt.Errorf("rebuild version %d: %w", e.Version, err)
				}
				cur = e.Version
				if keep[e.Version] && e.Version >= p.DropSnapshotsBefore {
					p.Snapshots[e.Version] = text
				}
			}
		}
	}
	if _, ok := p.Snapshots[through]; !ok && rows[len(rows)-1].Version == through && rows[len(rows)-1].Changes != nil {
		return fmt.Errorf("version %d, which the detail after it is rebuilt from, cannot be rebuilt; nothing pruned", through)
	}
	return a.store.PruneHistory(ctx, id, p)
}

// The history as MCP's.
var _ mcpserver.History = mcpStore{}

func (m mcpStore) Versions(ctx context.Context, id string, before int64, limit int) ([]room.Version, error) {
	return m.a.versions(ctx, id, before, limit)
}

func (m mcpStore) VersionText(ctx context.Context, id string, version int64) (string, error) {
	return m.a.versionText(ctx, id, version)
}
