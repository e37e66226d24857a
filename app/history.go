package app

// A plan's history (store/history.go): the versions a document keeps, each
// rebuilt from the nearest snapshot and the changes after it; restore of
// one as a new change; and the background pruning that keeps the detail
// for the configured window and snapshots beyond it.

import (
	"context"
	"encoding/json"
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
		stepped := false
		if curVersion >= 0 {
			text, stepped, err = stepText(curVersion, cur, e)
		}
		if !stepped || err != nil {
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
	if !b.Found {
		return "", a.versionGone(ctx, channelID, version)
	}
	text, cur, err := applyEntries(b.Version, b.Source, b.Changes)
	if err != nil {
		return "", fmt.Errorf("rebuild version %d: %w", version, err)
	}
	if cur != version {
		return "", a.versionGone(ctx, channelID, version)
	}
	return text, nil
}

// stepText is the text of version e, from text, the text of version cur:
// e's change applied when it follows cur (a change follows the version
// before it; a pruned history's step, the version it was computed from).
// ok is false when it does not follow cur.
func stepText(cur int64, text string, e store.HistoryEntry) (next string, ok bool, err error) {
	if e.Changes == nil {
		return "", false, nil
	}
	from, changes := e.Version-1, json.RawMessage(e.Changes)
	if step, isStep := store.ParseHistoryStep(e.Changes); isStep {
		from, changes = step.From, step.Changes
	}
	if from != cur {
		return "", false, nil
	}
	next, err = room.ApplyChanges(text, changes)
	return next, err == nil, err
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
	v, text, err := a.requestedVersion(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"version": v, "source": text})
}

// handleVersionMarkdown is a version's text as a Markdown file, for
// chopin export --version.
func (a *App) handleVersionMarkdown(c echo.Context) error {
	_, text, err := a.requestedVersion(c)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(text))
}

// requestedVersion is the version a request names and the plan's text at it.
func (a *App) requestedVersion(c echo.Context) (int64, string, error) {
	ch, err := a.channel(c)
	if err != nil {
		return 0, "", err
	}
	v, err := versionParam(c)
	if err != nil {
		return 0, "", err
	}
	text, err := a.versionText(c.Request().Context(), ch.ID, v)
	return v, text, err
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
// those, it keeps the last version of every SnapshotEvery period, and
// through itself (which the detail after it is rebuilt from), at most
// policy.Snapshots of them, newest kept. The oldest kept, and every
// snapshotStride-th after it, keeps its whole text; the others a step: the
// comparison of its text with the kept version before it, a few bytes for
// a day of typing where a whole text would be the plan's size.
func (a *App) pruneDocument(ctx context.Context, id string, through int64, policy store.HistoryPolicy) error {
	var rows []store.HistoryEntry // through and older, oldest first
	for before := through + 1; ; {
		page, err := a.store.History(ctx, id, before, 5000)
		if err != nil {
			return err
		}
		rows = append(rows, page...)
		if len(page) < 5000 {
			break
		}
		before = page[len(page)-1].Version
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Version < rows[j].Version })
	if len(rows) == 0 || rows[len(rows)-1].Version != through {
		return nil
	}
	every := max(policy.SnapshotEvery, 1)
	keep := map[int64]bool{through: true}
	for i, e := range rows {
		if i == len(rows)-1 || rows[i+1].At/every != e.At/every {
			keep[e.Version] = true
		}
	}
	var kept []int64
	for _, e := range rows {
		if keep[e.Version] {
			kept = append(kept, e.Version)
		}
	}
	if n := max(policy.Snapshots, 1); len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	// Every kept version's text: the oldest's rebuilt, the rest by walking
	// the rows after it.
	texts := make(map[int64]string, len(kept))
	text, err := a.versionText(ctx, id, kept[0])
	if err != nil {
		return fmt.Errorf("rebuild version %d: %w", kept[0], err)
	}
	cur := kept[0]
	texts[cur] = text
	for _, e := range rows {
		if e.Version <= kept[0] {
			continue
		}
		next, ok, err := stepText(cur, text, e)
		if err == nil && !ok && e.Changes == nil {
			next, err = a.versionText(ctx, id, e.Version) // a kept whole text
			ok = err == nil
		}
		if err != nil || !ok {
			return fmt.Errorf("version %d cannot be rebuilt from version %d (%v); nothing pruned", e.Version, cur, err)
		}
		text, cur = next, e.Version
		if keep[cur] {
			texts[cur] = text
		}
	}
	p := store.HistoryPrune{Through: through, Keep: kept, Snapshots: map[int64]string{}, Steps: map[int64]json.RawMessage{}}
	for i, v := range kept {
		if i%snapshotStride == 0 {
			p.Snapshots[v] = texts[v]
			continue
		}
		prev := kept[i-1]
		js, err := room.DiffChangeSet(texts[prev], texts[v]).MarshalJSON()
		if err != nil {
			return err
		}
		p.Steps[v] = store.HistoryStep{From: prev, Changes: js}.JSON()
	}
	return a.store.PruneHistory(ctx, id, p)
}

// snapshotStride is how many pruned versions apart whole texts are kept:
// it bounds the steps rebuilding one applies.
const snapshotStride = 90

// The history as MCP's.
var _ mcpserver.History = mcpStore{}

func (m mcpStore) Versions(ctx context.Context, id string, before int64, limit int) ([]room.Version, error) {
	return m.a.versions(ctx, id, before, limit)
}

func (m mcpStore) VersionText(ctx context.Context, id string, version int64) (string, error) {
	return m.a.versionText(ctx, id, version)
}
