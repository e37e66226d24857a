package app

// A plan's timeline and diffs (docs/http-api.md, "A plan's timeline" and
// "A diff of two versions"): the kept versions grouped into sessions of
// work, each with who, when, a summary of what it changed and the comment
// threads and decisions of its time; and a diff by block, with the changed
// words marked, of any two versions or of one and the plan now.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/fault"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// Paging of the timeline.
const (
	defaultTimelinePage = 30
	maxTimelinePage     = 100
)

// sessionPause is the longest pause within one session of a person's (or
// an MCP client's, or the server's) changes: a longer one starts another.
const sessionPause = 5 * 60 * 1000 // milliseconds

// timelineChunk is how many versions the timeline reads from the store at
// a time while it finds a page's sessions.
const timelineChunk = 500

// timelineWalk is the most kept versions the timeline applies one after
// another to reach a text it needs; past it, it rebuilds that text from
// the nearest snapshot instead (versionText, itself bounded).
const timelineWalk = 1000

// timelineQuote is how many characters of a thread's quote an event shows.
const timelineQuote = 80

// timelineSession is one session of work: a run of consecutive kept
// versions by one author.
type timelineSession struct {
	From     int64           `json:"from"`
	To       int64           `json:"to"`
	Start    int64           `json:"start"` // unix milliseconds, From's
	End      int64           `json:"end"`   // To's
	Author   room.Author     `json:"author"`
	Versions int             `json:"versions"`
	Summary  string          `json:"summary"`
	Events   []timelineEvent `json:"events"`
}

// timelineEvent is a comment thread started, or a decision asked or
// decided, while a session was the plan's newest.
type timelineEvent struct {
	Kind    string `json:"kind"` // thread, decision
	ID      string `json:"id"`
	Version int64  `json:"version"` // the plan's version when it happened
	Time    int64  `json:"time"`
	Text    string `json:"text"`             // the thread's quote, the question
	Action  string `json:"action"`           // started (a thread), asked or decided (a decision)
	Status  string `json:"status,omitempty"` // the thread's or the card's status now
}

// sameSession reports whether older, the kept version just before newer,
// belongs to newer's session: the same author, and for the Planner the
// same turn; for a person, an MCP client or the server no longer a pause
// than sessionPause. A restore, an import, a revert (and any kind not
// named here) is a session of its own.
func sameSession(newer, older store.HistoryEntry) bool {
	a, b := newer.Author, older.Author
	if a.Kind != b.Kind || a.Name != b.Name {
		return false
	}
	switch a.Kind {
	case room.AuthorPlanner:
		if a.Turn != "" || b.Turn != "" {
			return a.Turn == b.Turn
		}
		return newer.At-older.At <= sessionPause
	case room.AuthorPerson, room.AuthorMCP, room.AuthorServer:
		return newer.At-older.At <= sessionPause
	}
	return false
}

// timelinePage is one page of the timeline's sessions, newest first, and
// what the rest of it needs: the rows of the page oldest first, and the
// kept version before the page's oldest session, if any.
type timelinePage struct {
	sessions []timelineSession
	rows     []store.HistoryEntry // oldest first
	pred     *store.HistoryEntry  // the version before the oldest session
}

// timeline is a page of a document's sessions, newest first, of versions
// before the version before (all when 0), at most limit of them.
func (a *App) timeline(ctx context.Context, channelID string, before int64, limit int) ([]timelineSession, bool, error) {
	p, err := a.timelineSessions(ctx, channelID, before, limit)
	if err != nil {
		return nil, false, err
	}
	if len(p.sessions) == 0 {
		return []timelineSession{}, false, nil
	}
	a.summarise(ctx, channelID, &p)
	if err := a.placeEvents(ctx, channelID, before, &p); err != nil {
		return nil, false, err
	}
	return p.sessions, p.pred != nil, nil
}

// timelineSessions reads versions, newest first, until limit sessions are
// closed by the version before them, or the history ends.
func (a *App) timelineSessions(ctx context.Context, channelID string, before int64, limit int) (timelinePage, error) {
	var p timelinePage
	var newest []store.HistoryEntry // the page's rows, newest first
	var cur *timelineSession
	var last store.HistoryEntry // the oldest row of cur
	for {
		chunk, err := a.store.History(ctx, channelID, before, timelineChunk)
		if err != nil {
			return p, err
		}
		for _, e := range chunk {
			if cur != nil && sameSession(last, e) {
				cur.From, cur.Start, cur.Versions = e.Version, e.At, cur.Versions+1
				newest, last = append(newest, e), e
				continue
			}
			if len(p.sessions) == limit {
				p.pred = &e
				break
			}
			p.sessions = append(p.sessions, timelineSession{From: e.Version, To: e.Version, Start: e.At, End: e.At,
				Author: room.Author(e.Author), Versions: 1, Events: []timelineEvent{}})
			cur = &p.sessions[len(p.sessions)-1]
			newest, last = append(newest, e), e
		}
		if p.pred != nil || len(chunk) < timelineChunk {
			break
		}
		before = chunk[len(chunk)-1].Version
	}
	p.rows = make([]store.HistoryEntry, len(newest))
	for i, e := range newest {
		p.rows[len(newest)-1-i] = e
	}
	return p, nil
}

// summarise gives each session its summary: the text before its first
// version compared with the text at its last. The earliest kept session
// compares its first version with its last.
func (a *App) summarise(ctx context.Context, channelID string, p *timelinePage) {
	rows := p.rows
	if p.pred != nil {
		rows = append([]store.HistoryEntry{*p.pred}, rows...)
	}
	want := map[int64]bool{}
	for _, s := range p.sessions {
		want[s.To] = true
	}
	oldest := &p.sessions[len(p.sessions)-1]
	if p.pred != nil {
		want[p.pred.Version] = true
	} else {
		want[oldest.From] = true
	}
	texts := a.textsAt(ctx, channelID, rows, want)
	for i := range p.sessions {
		s := &p.sessions[i]
		var prev int64
		switch {
		case i+1 < len(p.sessions):
			prev = p.sessions[i+1].To
		case p.pred != nil:
			prev = p.pred.Version
		case s.From == s.To:
			s.Summary = "the earliest version kept"
			continue
		default:
			prev = s.From
		}
		before, ok1 := texts[prev]
		after, ok2 := texts[s.To]
		if !ok1 || !ok2 {
			s.Summary = "cannot be rebuilt"
			continue
		}
		s.Summary = room.ChangeSummary(before, after)
	}
}

// textsAt rebuilds the texts of the wanted versions among rows (oldest
// first, consecutive kept versions): each from the one before it where
// at most timelineWalk versions lie between, else from the nearest
// snapshot. A version that cannot be rebuilt is left out.
func (a *App) textsAt(ctx context.Context, channelID string, rows []store.HistoryEntry, want map[int64]bool) map[int64]string {
	out := make(map[int64]string, len(want))
	var wanted []int // indexes into rows
	for i, e := range rows {
		if want[e.Version] {
			wanted = append(wanted, i)
		}
	}
	text, at := "", -1 // rows[at]'s text, when at >= 0
	for _, w := range wanted {
		if at >= 0 && w-at <= timelineWalk {
			next, reached, err := applyEntries(rows[at].Version, text, rows[at+1:w+1])
			if err == nil && reached == rows[w].Version {
				text, at = next, w
			} else {
				at = -1
			}
		}
		if at != w {
			t, err := a.versionText(ctx, channelID, rows[w].Version)
			if err != nil {
				at = -1
				continue
			}
			text, at = t, w
		}
		out[rows[w].Version] = text
	}
	return out
}

// applyEntries applies kept versions' changes, oldest first, to text, the
// text of version cur, for as long as each follows the version before it
// (stepText). A run of changes is composed into one change set, which is
// applied to the text once: applying a thousand keystrokes one at a time
// would copy the whole plan a thousand times. It returns the text of the
// last version it reached, and that version.
func applyEntries(cur int64, text string, entries []store.HistoryEntry) (string, int64, error) {
	var run []room.ChangeSet // parsed changes not yet applied
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		cs, err := composeAll(run)
		if err == nil {
			text, err = cs.Apply(text)
		}
		run = run[:0]
		return err
	}
	for _, e := range entries {
		if e.Changes == nil {
			break
		}
		if step, isStep := store.ParseHistoryStep(e.Changes); isStep {
			if step.From != cur {
				break
			}
			if err := flush(); err != nil {
				return "", cur, err
			}
			next, err := room.ApplyChanges(text, step.Changes)
			if err != nil {
				return "", cur, err
			}
			text, cur = next, e.Version
			continue
		}
		if e.Version-1 != cur {
			break
		}
		cs, err := room.ParseChangeSet(e.Changes)
		if err != nil {
			return "", cur, fmt.Errorf("change %d: %w", e.Version, err)
		}
		if len(e.Changes) > composeBytes {
			// A large change (a whole plan pasted or replaced) costs
			// more to compose with another than to apply.
			if err := flush(); err != nil {
				return "", cur, err
			}
			if text, err = cs.Apply(text); err != nil {
				return "", cur, fmt.Errorf("change %d: %w", e.Version, err)
			}
			cur = e.Version
			continue
		}
		run = append(run, cs)
		cur = e.Version
	}
	if err := flush(); err != nil {
		return "", cur, err
	}
	return text, cur, nil
}

// composeBytes is the largest change, as stored, that applyEntries
// composes with the others of its run rather than applying it alone.
const composeBytes = 4 << 10

// composeAll composes change sets, in order, pairwise: each round halves
// their number, so a run of n small changes costs about n log n, where
// composing them one after another into a growing set would cost n².
func composeAll(sets []room.ChangeSet) (room.ChangeSet, error) {
	sets = append([]room.ChangeSet(nil), sets...)
	for len(sets) > 1 {
		next := sets[:0]
		for i := 0; i < len(sets); i += 2 {
			if i+1 == len(sets) {
				next = append(next, sets[i])
				break
			}
			c, err := sets[i].Compose(sets[i+1])
			if err != nil {
				return room.ChangeSet{}, err
			}
			next = append(next, c)
		}
		sets = next
	}
	return sets[0], nil
}

// placeEvents puts on each session the comment threads started and the
// decisions asked and decided while it was the plan's newest: from its
// first version's time to the next session's. What came before the
// earliest kept version goes on the earliest session.
func (a *App) placeEvents(ctx context.Context, channelID string, before int64, p *timelinePage) error {
	// Until when the page's newest session lasted: the time of the kept
	// version at before, which starts the session after it.
	until := int64(1<<62 - 1)
	if before > 0 {
		_, after, err := a.store.HistoryNeighbours(ctx, channelID, before-1)
		if err != nil {
			return err
		}
		if after > 0 {
			es, err := a.store.History(ctx, channelID, after+1, 1)
			if err != nil {
				return err
			}
			if len(es) == 1 {
				until = es[0].At
			}
		}
	}
	earliest := p.pred == nil // the page ends at the history's start
	var events []timelineEvent
	threads, err := a.store.CommentThreads(ctx, channelID)
	if err != nil {
		return err
	}
	for _, t := range threads {
		events = append(events, timelineEvent{Kind: "thread", ID: t.ID, Time: t.CreatedAt, Text: room.ClipLine(t.Quote, timelineQuote),
			Action: "started", Status: t.Status})
	}
	cards, err := a.store.Decisions(ctx, channelID)
	if err != nil {
		return err
	}
	for _, c := range cards {
		q := c.ID
		if call, err := room.ParseQuestionCall(c.Call); err == nil {
			q = questionOf(call, c.Index)
		}
		events = append(events, timelineEvent{Kind: "decision", ID: c.ID, Time: c.CreatedAt, Text: room.ClipLine(q, timelineQuote),
			Action: "asked", Status: c.Status})
		if c.Status == "decided" {
			events = append(events, timelineEvent{Kind: "decision", ID: c.ID, Time: c.UpdatedAt, Text: room.ClipLine(q, timelineQuote),
				Action: "decided", Status: c.Status})
		}
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time < events[j].Time })
	rows := p.rows
	for _, ev := range events {
		if ev.Time >= until {
			continue
		}
		// The newest version made at or before the event.
		i := sort.Search(len(rows), func(i int) bool { return rows[i].At > ev.Time }) - 1
		switch {
		case i >= 0:
		case earliest:
			i = 0
		default:
			continue // an older page's
		}
		ev.Version = rows[i].Version
		for k := range p.sessions {
			if s := &p.sessions[k]; s.From <= ev.Version && ev.Version <= s.To {
				s.Events = append(s.Events, ev)
				break
			}
		}
	}
	return nil
}

// questionOf is the question a card asks: its own in a questionnaire, else
// the call's title.
func questionOf(c room.QuestionCall, index int) string {
	if c.Method == room.MethodQuestionnaire && index >= 0 && index < len(c.Questions) {
		return c.Questions[index].Question
	}
	return c.Title
}

func (a *App) handleTimeline(c echo.Context) error {
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	var before int64
	limit := defaultTimelinePage
	if s := c.QueryParam("before"); s != "" {
		if before, err = strconv.ParseInt(s, 10, 64); err != nil || before < 1 {
			return badRequest("invalid-argument", "before must be a version of 1 or more: the page holds the sessions of the versions before it.")
		}
	}
	if s := c.QueryParam("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxTimelinePage {
			return badRequest("invalid-argument", fmt.Sprintf("limit must be a whole number from 1 to %d: how many sessions a page holds.", maxTimelinePage))
		}
	}
	sessions, more, err := a.timeline(c.Request().Context(), ch.ID, before, limit)
	if err != nil {
		return err
	}
	res := struct {
		Sessions []timelineSession `json:"sessions"`
		Next     *int64            `json:"next,omitempty"` // the before of the next page
	}{Sessions: sessions}
	if more {
		res.Next = &sessions[len(sessions)-1].From
	}
	return c.JSON(http.StatusOK, res)
}

// diffVersionParam reads a diff's version parameter name.
func diffVersionParam(c echo.Context, name string) (int64, error) {
	s := c.QueryParam(name)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, badRequest("invalid-version", name+"="+strconv.Quote(s)+" is not a version: give a whole number of 0 or more, as GET …/versions lists them.")
	}
	return v, nil
}

func (a *App) handleDiff(c echo.Context) error {
	if c.QueryParam("from") == "" {
		return badRequest("invalid-argument", "Say which version to compare: from=<version>, and to=<version> unless against the plan now.")
	}
	from, err := diffVersionParam(c, "from")
	if err != nil {
		return err
	}
	var to int64 = -1
	if c.QueryParam("to") != "" {
		if to, err = diffVersionParam(c, "to"); err != nil {
			return err
		}
	}
	ctx := c.Request().Context()
	answer := func(ch store.Channel, now string) error {
		old, err := a.versionText(ctx, ch.ID, from)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"from": from, "to": to,
			"summary": room.ChangeSummary(old, now), "blocks": room.DiffBlocks(old, now)})
	}
	if to < 0 { // the plan now, as its room has it
		return a.withRoom(c, func(ch store.Channel, r *room.Room) error {
			var now string
			to, now = r.Source()
			return answer(ch, now)
		})
	}
	// Two kept versions: no room to open (and close again, checkpointing).
	ch, err := a.channel(c)
	if err != nil {
		return err
	}
	now, err := a.versionText(ctx, ch.ID, to)
	if err != nil {
		return err
	}
	return answer(ch, now)
}

// plannerHistory is the history as the Planner's list_versions and
// read_version read it: the versions routes' own, with a version the
// history does not keep refused in the room's terms, which a tool error
// carries.
type plannerHistory struct{ a *App }

var _ plannerhost.History = plannerHistory{}

func (p plannerHistory) Versions(ctx context.Context, id string, before int64, limit int) ([]room.Version, error) {
	return p.a.versions(ctx, id, before, limit)
}

func (p plannerHistory) VersionText(ctx context.Context, id string, version int64) (string, error) {
	text, err := p.a.versionText(ctx, id, version)
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Kind == fault.NotFound {
		return "", &room.Error{Code: fe.Code, Message: strings.Replace(fe.Message, "GET …/versions", "list_versions", 1)}
	}
	return text, err
}
