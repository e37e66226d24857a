package room

// Comment threads on passages of the plan: a person selects text, writes a
// note, others reply; Accept freezes the thread, records the decision in
// the plan as a reserved <Comment id="..." /> line (only the server writes
// it, like <Decision>) and asks the Planner to revise exactly that passage;
// Dismiss closes it. A thread's passage is anchored by offsets that the room
// maps through every committed change, so it follows the text as people
// and the Planner type (docs/room-protocol.md, "Comments").
//
// This file holds what a thread is and how its passage's anchor follows
// the text: moved through every committed change, stored before a
// checkpoint lets the journal go, and moved through the journal (or found
// again by its quote) when a room loads. What people do with a thread is
// in comments_threads.go, Accept and the Planner's revision in
// comments_accept.go.

import (
	"context"
	"regexp"
	"strings"
	"sync"
)

// Bounds of comments.
const (
	MaxCommentNotes     = 100      // notes in one thread, the first included
	MaxCommentNoteBytes = 8 * 1024 // bytes of UTF-8 in one note
	MaxOpenThreads      = 200      // open threads in one document
	MaxPassageBytes     = 4096     // bytes of UTF-8 a passage (its quote) may hold
	MaxResultBytes      = 16 * 1024
	// maxThreads bounds every thread a document keeps, closed ones included,
	// so the comment:sync frame stays bounded.
	maxThreads = 2000
)

// Thread statuses.
const (
	ThreadOpen      = "open"
	ThreadAccepted  = "accepted"
	ThreadDismissed = "dismissed"
)

// Passage anchor states.
const (
	AnchorExact    = "anchored" // the passage reads as its quote
	AnchorChanged  = "changed"  // the text in the passage changed; the thread stays on it
	AnchorOrphaned = "orphaned" // every character of the passage was deleted
)

// Result states of an accepted thread.
const (
	ResultRevising = "revising" // the Planner's turn is under way
	ResultRevised  = "revised"  // the turn ended; Blocks holds what it wrote
	ResultNone     = "unrevised"
	ResultNoPlan   = "no-planner" // no Planner took the turn; nobody will revise it
)

// Passage is where a thread points: the block(s) it lies in as the
// creator's text had them (checked against the server's), its offsets in
// UTF-16 code units of the plan at Version (as CodeMirror counts), and
// what it said then.
type Passage struct {
	Blocks    []BlockRef `json:"blocks"` // the first and, when different, the last block
	From      int        `json:"from"`
	To        int        `json:"to"`
	Version   int64      `json:"version"` // the plan version From and To refer to
	Quote     string     `json:"quote"`
	State     string     `json:"state"`
	StartLine int        `json:"startLine"` // 1-based lines the passage covers now
	EndLine   int        `json:"endLine"`
}

// CommentNote is one note of a thread.
type CommentNote struct {
	ID        string `json:"id"`
	Author    string `json:"author"`
	Text      string `json:"text"`
	CreatedAt int64  `json:"createdAt"`
}

// ThreadResult is what came of an accepted thread.
type ThreadResult struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"` // the Chat message of the turn, or why there was none
	Reply   string `json:"reply,omitempty"`   // the Planner's reply to the turn
	Blocks  string `json:"blocks,omitempty"`  // the blocks the Planner wrote in the turn, as Markdown
	Cut     bool   `json:"cut,omitempty"`     // Blocks reached MaxResultBytes
}

// Thread is one comment thread.
type Thread struct {
	ID        string        `json:"id"`
	ChannelID string        `json:"-"`
	Status    string        `json:"status"`
	Passage   Passage       `json:"passage"`
	Notes     []CommentNote `json:"notes"`
	CreatedBy string        `json:"createdBy"`
	CreatedAt int64         `json:"createdAt"`
	UpdatedAt int64         `json:"updatedAt"`
	DecidedBy string        `json:"decidedBy,omitempty"`
	DecidedAt int64         `json:"decidedAt,omitempty"`
	Result    *ThreadResult `json:"result,omitempty"`
}

// CommentStore is where a room keeps its threads. Every method is one
// transaction; the app plugs in the database.
type CommentStore interface {
	// Threads reads every thread of a document, oldest first.
	Threads(ctx context.Context, channelID string) ([]Thread, error)
	// SaveThreads inserts or replaces threads, with the plan updates that
	// write their <Comment> lines, if any, in one transaction.
	SaveThreads(ctx context.Context, channelID string, threads []Thread, placement []Update) error
}

// NewThread is what a person sends to start a thread: the passage as their
// text has it at Version, and the first note.
type NewThread struct {
	Version int64      `json:"version"`
	Blocks  []BlockRef `json:"blocks"`
	From    int        `json:"from"`
	To      int        `json:"to"`
	Quote   string     `json:"quote"`
	Text    string     `json:"text"`
}

// commentMark matches a whole <Comment id="..." /> line the server wrote.
var commentMark = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[ \t]*<Comment[ \t]+id="([A-Za-z0-9][A-Za-z0-9._:-]{0,127})"[ \t]*/>[ \t]*$`)
})

type comments struct {
	threads []*Thread
	// revising is the accepted thread whose Planner turn is under way, and
	// reply that turn's Planner reply once it started.
	revising, reply string
	// stored is each thread's passage as the store has it: a checkpoint
	// writes only the threads whose anchor the journal it keeps could not
	// bring back (storeAnchorsLocked).
	stored map[string]Passage
}

var errNoComments = errorf(CodeInternal, "This server keeps no comments.")

func (c *comments) load(ctx context.Context, r *Room) error {
	c.threads, c.stored = nil, map[string]Passage{}
	if r.hub.comments == nil {
		return nil
	}
	ts, err := r.hub.comments.Threads(ctx, r.channelID)
	if err != nil {
		return err
	}
	for i := range ts {
		t := &ts[i]
		if t.Result != nil && t.Result.State == ResultRevising {
			// Chopin stopped during the turn: what it wrote is kept.
			t.Result.State = ResultRevised
		}
		c.threads = append(c.threads, t)
		c.stored[t.ID] = t.Passage
	}
	// Anchors were stored at some version; the journal after it moves them,
	// whatever the thread's status: a closed thread keeps its place too.
	for _, t := range c.threads {
		if t.Passage.State != AnchorOrphaned && t.Passage.Version >= r.plan.histBase && t.Passage.Version < r.plan.base {
			if err := r.plan.historyLocked(ctx, r); err != nil {
				return err
			}
			break
		}
	}
	for _, t := range c.threads {
		if t.Passage.State == AnchorOrphaned || t.Passage.Version == r.plan.version {
			t.Passage.Version = r.plan.version // an orphan has no place to move
			continue
		}
		if t.Passage.Version < r.plan.base || t.Passage.Version > r.plan.version {
			// The history that would move it is gone: find the quote
			// again only where it is unambiguous, never guess.
			relocate(t, r.plan.text)
			t.Passage.Version = r.plan.version
			continue
		}
		for _, u := range r.plan.tail[t.Passage.Version-r.plan.base:] {
			cs, err := ParseChangeSet(u.Changes)
			if err != nil {
				return err
			}
			mapPassage(&t.Passage, cs)
		}
		t.Passage.Version = r.plan.version
	}
	for _, t := range c.threads {
		refreshPassage(&t.Passage, r.plan.text)
	}
	return nil
}

// relocate anchors t where its quote occurs exactly once, else orphans it.
func relocate(t *Thread, text string) {
	p := &t.Passage
	if i := strings.Index(text, p.Quote); i >= 0 && p.Quote != "" && strings.Count(text, p.Quote) == 1 {
		p.From = UTF16Len(text[:i])
		p.To = p.From + UTF16Len(p.Quote)
	} else {
		p.State = AnchorOrphaned
	}
}

// mapPos is CodeMirror's ChangeDesc.mapPos: where pos of the base document
// is after the changes. assoc < 0 keeps it before text inserted at it,
// assoc > 0 after.
func mapPos(c ChangeSet, pos, assoc int) int {
	posA, posB := 0, 0
	for _, s := range c.sections {
		endA := posA + s.len
		if s.kept {
			if endA > pos {
				return posB + (pos - posA)
			}
			posB += s.len
		} else {
			ins := UTF16Len(s.insert)
			if endA > pos || endA == pos && assoc < 0 && s.len == 0 {
				if pos == posA || assoc < 0 {
					return posB
				}
				return posB + ins
			}
			posB += ins
		}
		posA = endA
	}
	return posB
}

// touches reports whether c changes anything inside [from, to): deletes or
// replaces part of it, or inserts strictly inside it.
func touches(c ChangeSet, from, to int) bool {
	posA := 0
	for _, s := range c.sections {
		endA := posA + s.len
		if !s.kept {
			if s.len > 0 && posA < to && endA > from || s.len == 0 && s.insert != "" && posA > from && posA < to {
				return true
			}
		}
		posA = endA
	}
	return false
}

// mapPassage moves a passage through a change: its start sticks to the text
// after it and its end to the text before it, so typing at either edge stays
// outside it. A passage none of whose characters are left covers the text
// that replaced them, if any (a block the Planner replaced, a word typed over
// a selection); one whose every character was deleted, with nothing in its
// place, is orphaned. touched reports that the change reached into the
// passage; moved, that the passage is not where CodeMirror's mapping of the
// change puts a mark (the tabs must be told).
func mapPassage(p *Passage, c ChangeSet) (touched, moved bool) {
	if p.State == AnchorOrphaned {
		return false, false
	}
	touched = touches(c, p.From, p.To)
	from, to := mapPos(c, p.From, 1), mapPos(c, p.To, -1)
	if from < to {
		p.From, p.To = from, to
		return touched, false
	}
	if rf, rt, ok := replacement(c, p.From, p.To); ok {
		p.From, p.To = rf, rt
		return true, true
	}
	p.From, p.To = min(from, to), min(from, to)
	p.State = AnchorOrphaned
	return true, false
}

// replacement is where the text lies that c wrote in place of [from, to):
// from the first to the last section that replaced part of it. ok is false
// when those sections only deleted.
func replacement(c ChangeSet, from, to int) (rf, rt int, ok bool) {
	posA, posB := 0, 0
	rf = -1
	for _, s := range c.sections {
		endA := posA + s.len
		if s.kept {
			posB += s.len
		} else {
			ins := UTF16Len(s.insert)
			if s.len > 0 && posA < to && endA > from {
				if rf < 0 {
					rf = posB
				}
				rt = posB + ins
			}
			posB += ins
		}
		if posA >= to {
			break
		}
		posA = endA
	}
	return rf, rt, rf >= 0 && rt > rf
}

// movePassage is mapPassage for an edit_plan batch that moved blocks: a
// passage that lay inside a moved block goes with it.
func movePassage(p *Passage, c ChangeSet, moves []blockMove) (touched, moved bool) {
	if p.State != AnchorOrphaned {
		for _, m := range moves {
			if m.oldFrom <= p.From && p.To <= m.oldTo {
				p.From, p.To = m.newFrom+p.From-m.oldFrom, m.newFrom+p.To-m.oldFrom
				return true, true
			}
		}
	}
	return mapPassage(p, c)
}

// refreshPassage sets a passage's state and lines from the text it is in.
func refreshPassage(p *Passage, text string) {
	if p.State == AnchorOrphaned {
		p.StartLine, p.EndLine = 0, 0
		return
	}
	start, err1 := advance(text, 0, p.From)
	end, err2 := advance(text, start, p.To-p.From)
	if err1 != nil || err2 != nil {
		p.State = AnchorOrphaned
		p.StartLine, p.EndLine = 0, 0
		return
	}
	if text[start:end] == p.Quote {
		p.State = AnchorExact
	} else {
		p.State = AnchorChanged
	}
	ls := splitLines(text)
	p.StartLine = ls.lineAt(start)
	p.EndLine = ls.lineAt(max(start, end-1))
}

// mapLocked moves every thread's anchor, open or closed, through updates
// just committed, and publishes the threads whose state changed or that are
// not where the tabs' own mapping of the change puts them. moves are the
// blocks an edit_plan batch moved (its update is then the only one). It
// runs in acceptLocked.
func (c *comments) mapLocked(r *Room, updates []Update, moves []blockMove) {
	if len(c.threads) == 0 {
		return
	}
	touched := map[*Thread]bool{}
	tell := map[*Thread]bool{}
	was := map[*Thread]string{}
	for _, t := range c.threads {
		was[t] = t.Passage.State
	}
	for _, u := range updates {
		cs, err := ParseChangeSet(u.Changes)
		if err != nil {
			// Checked before it was committed; this cannot happen.
			r.hub.logf(r).Error("map comment anchors", "err", err)
			return
		}
		for _, t := range c.threads {
			changed, moved := movePassage(&t.Passage, cs, moves)
			touched[t] = touched[t] || changed
			tell[t] = tell[t] || moved
			t.Passage.Version = u.Version
		}
	}
	for _, t := range c.threads {
		if !touched[t] {
			continue
		}
		refreshPassage(&t.Passage, r.plan.text)
		if tell[t] || was[t] != t.Passage.State {
			r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
		}
	}
}

// movedThreadsLocked is the threads an edit_plan batch's update u (with
// change set cs, making text) takes along with the blocks it moves, as
// they are once it is committed. They are stored with the update: the
// update alone, replayed from the journal after a crash, would leave them
// where the blocks were.
func (c *comments) movedThreadsLocked(u Update, cs ChangeSet, moves []blockMove, text string) []Thread {
	var out []Thread
	for _, t := range c.threads {
		next := *t
		if _, moved := movePassage(&next.Passage, cs, moves); !moved || next.Passage.State == AnchorOrphaned {
			continue
		}
		refreshPassage(&next.Passage, text)
		next.Passage.Version = u.Version
		out = append(out, next)
	}
	return out
}

// threadOutLocked is t as members and the Planner see it: with the lines
// its passage covers now.
func (r *Room) threadOutLocked(t *Thread) Thread {
	out := *t
	out.Notes = append([]CommentNote{}, t.Notes...)
	p := &out.Passage
	p.StartLine, p.EndLine = 0, 0
	if p.State != AnchorOrphaned {
		start, err1 := advance(r.plan.text, 0, p.From)
		end, err2 := advance(r.plan.text, start, p.To-p.From)
		if err1 == nil && err2 == nil {
			ls := splitLines(r.plan.text)
			p.StartLine, p.EndLine = ls.lineAt(start), ls.lineAt(max(start, end-1))
		}
	}
	return out
}

// storeAnchorsLocked stores, before a checkpoint lets go of the journal
// before it, every thread whose stored anchor that journal could no longer
// bring to where the room has it: one that moved or changed state since it
// was stored, or was stored at a version the journal will not keep.
func (c *comments) storeAnchorsLocked(ctx context.Context, r *Room) error {
	if r.hub.comments == nil {
		return nil
	}
	keep := max(r.plan.histBase, r.plan.version-keepUpdates) // checkpointRecordLocked's
	var ts []Thread
	for _, t := range c.threads {
		if c.mustStore(t, keep) {
			ts = append(ts, *t)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	if err := r.hub.comments.SaveThreads(ctx, r.channelID, ts, nil); err != nil {
		return err
	}
	for _, t := range ts {
		c.stored[t.ID] = t.Passage
	}
	return nil
}

// mustStore reports whether t's anchor must be stored for the journal after
// version keep to bring it back.
func (c *comments) mustStore(t *Thread, keep int64) bool {
	s, ok := c.stored[t.ID]
	switch {
	case !ok:
		return true
	case t.Passage.State == AnchorOrphaned:
		return s.State != AnchorOrphaned // an orphan never moves again
	}
	return s.Version < keep || s.From != t.Passage.From || s.To != t.Passage.To || s.State != t.Passage.State
}

func (c *comments) find(id string) *Thread {
	for _, t := range c.threads {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// Threads returns every thread of the document, oldest first.
func (r *Room) Threads() []Thread {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.threadsLocked()
}

func (r *Room) threadsLocked() []Thread {
	out := make([]Thread, 0, len(r.comments.threads))
	for _, t := range r.comments.threads {
		out = append(out, r.threadOutLocked(t))
	}
	return out
}
