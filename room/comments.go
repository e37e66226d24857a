package room

// Comment threads on passages of the plan: a person selects text, writes a
// note, others reply; Accept freezes the thread, records the decision in
// the plan as a reserved <Comment id="..." /> line (only the server writes
// it, like <Decision>) and asks the Planner to revise exactly that passage;
// Dismiss closes it. A thread's passage is anchored by offsets that the room
// maps through every committed change, so it follows the text as people
// and the Planner type (docs/room-protocol.md, "Comments").

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
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
	dirty           bool // anchors moved since they were last stored
}

var errNoComments = errorf(CodeInternal, "This server keeps no comments.")

func (c *comments) load(ctx context.Context, r *Room) error {
	c.threads = nil
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
	}
	// Anchors were stored at some version; the journal after it moves them.
	for _, t := range c.threads {
		if t.Status != ThreadDismissed && t.Passage.State != AnchorOrphaned &&
			t.Passage.Version >= r.plan.histBase && t.Passage.Version < r.plan.base {
			if err := r.plan.historyLocked(ctx, r); err != nil {
				return err
			}
			break
		}
	}
	for _, t := range c.threads {
		if t.Status == ThreadDismissed || t.Passage.State == AnchorOrphaned || t.Passage.Version == r.plan.version {
			continue
		}
		if t.Passage.Version < r.plan.base || t.Passage.Version > r.plan.version {
			// The history that would move it is gone: find the quote
			// again only where it is unambiguous, never guess.
			relocate(t, r.plan.text)
			c.dirty = true
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
		c.dirty = true
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
// outside it. A passage whose text was replaced whole covers the replacement;
// one whose every character was deleted is orphaned.
func mapPassage(p *Passage, c ChangeSet) (touched bool) {
	if p.State == AnchorOrphaned {
		return false
	}
	touched = touches(c, p.From, p.To)
	from, to := mapPos(c, p.From, 1), mapPos(c, p.To, -1)
	if from > to {
		from, to = to, from
	}
	p.From, p.To = from, to
	if from == to {
		p.State = AnchorOrphaned
		return true
	}
	return touched
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

// mapLocked moves every live anchor through updates just committed and
// publishes the threads whose state changed. It runs in acceptLocked.
func (c *comments) mapLocked(r *Room, updates []Update) {
	if len(c.threads) == 0 {
		return
	}
	touched := map[*Thread]bool{}
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
			if t.Status == ThreadDismissed || t.Passage.State == AnchorOrphaned {
				continue
			}
			if mapPassage(&t.Passage, cs) {
				touched[t] = true
			}
			t.Passage.Version = u.Version
			c.dirty = true
		}
	}
	for _, t := range c.threads {
		if !touched[t] {
			continue
		}
		refreshPassage(&t.Passage, r.plan.text)
		if was[t] != t.Passage.State {
			r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
		}
	}
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

// storeAnchorsLocked stores the threads whose anchors moved, before a
// checkpoint lets the journal that could move them again go.
func (c *comments) storeAnchorsLocked(ctx context.Context, r *Room) error {
	if !c.dirty || r.hub.comments == nil {
		return nil
	}
	var ts []Thread
	for _, t := range c.threads {
		if t.Status != ThreadDismissed {
			ts = append(ts, *t)
		}
	}
	if err := r.hub.comments.SaveThreads(ctx, r.channelID, ts, nil); err != nil {
		return err
	}
	c.dirty = false
	return nil
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

func checkNote(text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errorf(CodeInvalidArgument, "A comment needs some text.")
	}
	if len(text) > MaxCommentNoteBytes {
		return "", errorf(CodeCommentTooLarge, "A comment holds at most %d bytes of text; this one has %d.", MaxCommentNoteBytes, len(text))
	}
	if !utf8.ValidString(text) {
		return "", errorf(CodeInvalidArgument, "A comment must be valid UTF-8 text.")
	}
	return text, nil
}

// StartThread opens a thread on a passage with its first note. The passage
// must be where the member's text says it is: at the current version, in
// the blocks it names, with the digests the server's own text gives them,
// reading as the quote.
func (r *Room) StartThread(ctx context.Context, who Identity, in NewThread) (Thread, error) {
	text, err := checkNote(in.Text)
	if err != nil {
		return Thread{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.commentableLocked(); err != nil {
		return Thread{}, err
	}
	open := 0
	for _, t := range r.comments.threads {
		if t.Status == ThreadOpen {
			open++
		}
	}
	if open >= MaxOpenThreads {
		return Thread{}, errorf(CodeTooManyThreads, "This document already has %d open comment threads, the most it keeps; accept or dismiss some first.", MaxOpenThreads)
	}
	if len(r.comments.threads) >= maxThreads {
		return Thread{}, errorf(CodeTooManyThreads, "This document already keeps %d comment threads, the most it can.", maxThreads)
	}
	if in.Version != r.plan.version {
		return Thread{}, errorf(CodeStaleVersion, "The plan has moved on to version %d; select the passage again.", r.plan.version)
	}
	passage, err := checkPassage(r.plan.text, r.plan.blocksLocked(), in)
	if err != nil {
		return Thread{}, err
	}
	passage.Version = r.plan.version
	now := r.hub.now().UnixMilli()
	t := Thread{ID: "c" + newID(), ChannelID: r.channelID, Status: ThreadOpen, Passage: passage,
		Notes:     []CommentNote{{ID: newID(), Author: who.Login, Text: text, CreatedAt: now}},
		CreatedBy: who.Login, CreatedAt: now, UpdatedAt: now}
	if err := r.saveThreadLocked(ctx, &t, nil); err != nil {
		return Thread{}, err
	}
	r.comments.threads = append(r.comments.threads, &t)
	r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(&t)})
	return t, nil
}

// checkPassage checks a new thread's passage against the plan's text.
func checkPassage(text string, blocks []Block, in NewThread) (Passage, error) {
	if len(in.Quote) > MaxPassageBytes {
		return Passage{}, errorf(CodePassageTooLarge, "A comment's passage holds at most %d bytes; select less text.", MaxPassageBytes)
	}
	if in.From < 0 || in.To <= in.From {
		return Passage{}, errorf(CodeInvalidPassage, "Select some text to comment on.")
	}
	start, err := advance(text, 0, in.From)
	if err != nil {
		return Passage{}, errorf(CodeInvalidPassage, "The passage starts outside the plan.")
	}
	end, err := advance(text, start, in.To-in.From)
	if err != nil {
		return Passage{}, errorf(CodeInvalidPassage, "The passage ends outside the plan.")
	}
	if text[start:end] != in.Quote {
		return Passage{}, errorf(CodeInvalidPassage, "The plan does not read as the quoted passage there; select the passage again.")
	}
	ls := splitLines(text)
	first, last := ls.lineAt(start), ls.lineAt(end-1)
	blockAt := func(line int) int {
		for _, b := range blocks {
			if b.StartLine <= line && line <= b.EndLine {
				return b.Index
			}
		}
		return -1
	}
	fb, lb := blockAt(first), blockAt(last)
	if fb < 0 || lb < 0 {
		return Passage{}, errorf(CodeInvalidPassage, "Select text inside the plan's blocks, not the blank lines between them.")
	}
	for i := fb; i <= lb; i++ {
		if blocks[i].Type == BlockDecision {
			return Passage{}, errorf(CodeInvalidPassage, "A decision card or accepted comment cannot be commented on; select the text around it.")
		}
	}
	want := []BlockRef{{Index: fb, Digest: blocks[fb].Digest}}
	if lb != fb {
		want = append(want, BlockRef{Index: lb, Digest: blocks[lb].Digest})
	}
	if len(in.Blocks) != len(want) {
		return Passage{}, errorf(CodeInvalidPassage, "The passage lies in blocks %s; name them with their index and digest.", blockList(want))
	}
	for i, b := range want {
		if in.Blocks[i] != b {
			return Passage{}, errorf(CodeInvalidPassage, "Block %d of the plan does not match the block the passage names (index %d, digest %s); the text there differs. Select the passage again.",
				b.Index, in.Blocks[i].Index, in.Blocks[i].Digest)
		}
	}
	return Passage{Blocks: want, From: in.From, To: in.To, Quote: in.Quote, State: AnchorExact, StartLine: first, EndLine: last}, nil
}

func blockList(bs []BlockRef) string {
	if len(bs) == 1 {
		return fmt.Sprint(bs[0].Index)
	}
	return fmt.Sprintf("%d to %d", bs[0].Index, bs[1].Index)
}

// ReplyThread adds a note to an open thread.
func (r *Room) ReplyThread(ctx context.Context, who Identity, id, text string) (Thread, error) {
	text, err := checkNote(text)
	if err != nil {
		return Thread{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := r.openThreadLocked(id)
	if err != nil {
		return Thread{}, err
	}
	if len(t.Notes) >= MaxCommentNotes {
		return Thread{}, errorf(CodeThreadFull, "This thread already has %d notes, the most one holds; accept or dismiss it, or start another.", MaxCommentNotes)
	}
	next := *t
	now := r.hub.now().UnixMilli()
	next.Notes = append(append([]CommentNote{}, t.Notes...), CommentNote{ID: newID(), Author: who.Login, Text: text, CreatedAt: now})
	next.UpdatedAt = now
	if err := r.saveThreadLocked(ctx, &next, nil); err != nil {
		return Thread{}, err
	}
	*t = next
	r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
	return next, nil
}

// DismissThread closes an open thread without the Planner.
func (r *Room) DismissThread(ctx context.Context, who Identity, id string) (Thread, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, err := r.openThreadLocked(id)
	if err != nil {
		return Thread{}, err
	}
	next := *t
	now := r.hub.now().UnixMilli()
	next.Status, next.DecidedBy, next.DecidedAt, next.UpdatedAt = ThreadDismissed, who.Login, now, now
	if err := r.saveThreadLocked(ctx, &next, nil); err != nil {
		return Thread{}, err
	}
	*t = next
	r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
	return next, nil
}

// AcceptThread freezes an open thread, writes its <Comment> record into
// the plan after the passage's last block, and asks the Planner to revise
// exactly that passage. Without a Planner that can take the turn the
// decision is still recorded, and its result says nobody will revise it.
func (r *Room) AcceptThread(ctx context.Context, who Identity, id string) (Thread, error) {
	defer r.checkpointIfDue(ctx) // after the lock is let go
	r.mu.Lock()
	t, err := r.openThreadLocked(id)
	if err != nil {
		r.mu.Unlock()
		return Thread{}, err
	}
	next := *t
	now := r.hub.now().UnixMilli()
	next.Status, next.DecidedBy, next.DecidedAt, next.UpdatedAt = ThreadAccepted, who.Login, now, now
	after := -1
	if next.Passage.State != AnchorOrphaned {
		start, _ := advance(r.plan.text, 0, next.Passage.To)
		line := splitLines(r.plan.text).lineAt(max(start-1, 0))
		for _, b := range r.plan.blocksLocked() {
			if b.StartLine <= line {
				after = b.Index
			}
		}
	}
	var turnErr error
	if err := r.hub.planner.Available(ctx, r.channel); err != nil {
		turnErr = err
		next.Result = &ThreadResult{State: ResultNoPlan, Message: noRevision(err)}
	} else {
		next.Result = &ThreadResult{State: ResultRevising}
	}
	text := insertCommentMark(r.plan.text, after, next.ID)
	u, err := r.serverUpdateLocked(text)
	if err != nil {
		r.mu.Unlock()
		return Thread{}, err
	}
	if err := r.saveThreadLocked(ctx, &next, []Update{u}); err != nil {
		r.mu.Unlock()
		return Thread{}, err
	}
	*t = next
	r.plan.acceptLocked(r, []Update{u}, text, UTF16Len(text))
	if turnErr != nil {
		r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
		r.mu.Unlock()
		return next, nil
	}
	prompt := revisionPrompt(r.plan.text, *t)
	msg, err := r.postLocked(ctx, Message{Role: RolePerson, Author: who.Login, Text: prompt})
	if err != nil {
		r.mu.Unlock()
		return Thread{}, err
	}
	t.Result.Message = msg.ID
	r.comments.revising, r.comments.reply = t.ID, ""
	r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
	ch := r.channel
	r.mu.Unlock()
	if err := r.hub.planner.Turn(ctx, ch, msg); err != nil {
		// The Planner went away between the check and the hand-over.
		r.mu.Lock()
		if r.comments.revising == id {
			r.comments.revising = ""
			t.Result = &ThreadResult{State: ResultNoPlan, Message: noRevision(err)}
			if serr := r.saveThreadLocked(ctx, t, nil); serr != nil {
				r.hub.logf(r).Error("save comment thread", "err", serr)
			}
			r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
		}
		next = *t
		r.mu.Unlock()
	}
	return next, nil
}

// noRevision says why nobody revises an accepted passage, in the words the
// Planner's refusal gives.
func noRevision(err error) string {
	reason := "no Planner could take it"
	var re *Error
	if errors.As(err, &re) {
		reason = strings.TrimSuffix(re.Message, ".")
	}
	return "The decision is recorded, but nobody will revise this passage until a Planner attaches (" + reason + "). Nothing is kept for later: accept a new comment once a Planner is attached."
}

// revisionPrompt is the turn an accepted thread starts: the passage (its
// quote and where it is now) and the thread's notes.
func revisionPrompt(text string, t Thread) string {
	var b strings.Builder
	b.WriteString("@chopin Please revise exactly this passage of the plan, as the comment thread below asks, and nothing else.\n\n")
	p := t.Passage
	switch p.State {
	case AnchorOrphaned:
		b.WriteString("The passage has since been deleted from the plan. It read:\n")
	case AnchorChanged:
		fmt.Fprintf(&b, "The passage is on lines %d-%d; its text has changed since the comment. It read:\n", p.StartLine, p.EndLine)
	default:
		fmt.Fprintf(&b, "The passage is on lines %d-%d and reads:\n", p.StartLine, p.EndLine)
	}
	b.WriteString(quoteBlock(p.Quote))
	if p.State == AnchorChanged {
		start, _ := advance(text, 0, p.From)
		end, _ := advance(text, start, p.To-p.From)
		b.WriteString("It now reads:\n")
		b.WriteString(quoteBlock(text[start:end]))
	}
	b.WriteString("\nThe thread:\n")
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "- @%s: %s\n", n.Author, strings.ReplaceAll(n.Text, "\n", "\n  "))
	}
	fmt.Fprintf(&b, "\nRead the plan, then change only the block(s) holding this passage with edit_plan. (Comment %s, accepted by @%s.)", t.ID, t.DecidedBy)
	return b.String()
}

// truncUTF8 is s cut to at most n bytes, between characters.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func quoteBlock(s string) string {
	return "> " + strings.ReplaceAll(s, "\n", "\n> ") + "\n"
}

// insertCommentMark writes <Comment id="..." /> after block afterBlock.
func insertCommentMark(source string, afterBlock int, id string) string {
	placeholder := InsertDecisionMarks(source, afterBlock, []string{id})
	return strings.Replace(placeholder, `<Decision id="`+id+`" />`, `<Comment id="`+id+`" />`, 1)
}

// plannerEditedLocked keeps the blocks a Planner turn wrote as the result
// of the thread it revises: those of after whose digest before lacks.
func (c *comments) plannerEditedLocked(ctx context.Context, r *Room, before, after string) {
	if c.revising == "" {
		return
	}
	t := c.find(c.revising)
	if t == nil || t.Result == nil {
		return
	}
	had := map[string]int{}
	for _, b := range Blocks(before) {
		had[b.Digest]++
	}
	var wrote []string
	for _, b := range Blocks(after) {
		if had[b.Digest] > 0 {
			had[b.Digest]--
			continue
		}
		if b.Type != BlockDecision {
			wrote = append(wrote, BlockSource(after, b))
		}
	}
	if len(wrote) == 0 {
		return
	}
	res := *t.Result
	add := strings.Join(wrote, "\n\n")
	if res.Blocks != "" {
		add = "\n\n" + add
	}
	if res.Cut {
		return
	}
	if len(res.Blocks)+len(add) > MaxResultBytes {
		add = truncUTF8(add, MaxResultBytes-len(res.Blocks))
		res.Cut = true
	}
	res.Blocks += add
	r.saveResultLocked(ctx, t, res)
}

// replyStartedLocked ties a Planner reply to the thread being revised.
func (c *comments) replyStartedLocked(id string) {
	if c.revising != "" && c.reply == "" {
		c.reply = id
	}
}

// replyFinishedLocked ends the revision when its reply ends.
func (c *comments) replyFinishedLocked(ctx context.Context, r *Room, id string) {
	if c.revising == "" || c.reply != id {
		return
	}
	t := c.find(c.revising)
	c.revising, c.reply = "", ""
	if t == nil || t.Result == nil {
		return
	}
	res := *t.Result
	res.Reply = id
	res.State = ResultRevised
	if res.Blocks == "" {
		res.State = ResultNone
	}
	r.saveResultLocked(ctx, t, res)
}

// saveResultLocked stores thread t with res as its revision's result and
// shows it to the members; a failed save is logged and changes nothing.
func (r *Room) saveResultLocked(ctx context.Context, t *Thread, res ThreadResult) {
	next := *t
	next.Result = &res
	next.UpdatedAt = r.hub.now().UnixMilli()
	if err := r.saveThreadLocked(ctx, &next, nil); err != nil {
		r.hub.logf(r).Error("save comment result", "err", err)
		return
	}
	*t = next
	r.broadcastLocked(msgThread{Type: "comment:thread", Thread: r.threadOutLocked(t)})
}

// typing relays to the other members that m is writing in a thread;
// nothing is stored.
func (m *Member) typing(id string) error {
	r := m.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.openThreadLocked(id); err != nil {
		return err
	}
	frame := encode(msgTyping{Type: "comment:typing", Thread: id, Login: m.who.Login, Name: m.who.Name})
	for o := range r.members {
		if o != m {
			o.conn.Send(frame)
		}
	}
	return nil
}

func (r *Room) commentableLocked() error {
	if r.hub.comments == nil {
		return errNoComments
	}
	return r.writableLocked()
}

func (r *Room) openThreadLocked(id string) (*Thread, error) {
	if err := r.commentableLocked(); err != nil {
		return nil, err
	}
	t := r.comments.find(id)
	if t == nil {
		return nil, errorf(CodeNotFound, "This document has no comment thread %q.", id)
	}
	if t.Status != ThreadOpen {
		return nil, errorf(CodeThreadClosed, "This comment thread is already %s; it takes no more changes.", t.Status)
	}
	return t, nil
}

// saveThreadLocked stores t at the current anchor version, with placement.
func (r *Room) saveThreadLocked(ctx context.Context, t *Thread, placement []Update) error {
	if r.hub.comments == nil {
		return errNoComments
	}
	t.Passage.Version = r.plan.version
	if len(placement) > 0 {
		t.Passage.Version = placement[len(placement)-1].Version - 1
	}
	if err := r.hub.comments.SaveThreads(ctx, r.channelID, []Thread{*t}, placement); err != nil {
		return fmt.Errorf("save comment thread: %w", err)
	}
	return nil
}

// CommentSync is the comment:sync snapshot: every thread with the plan
// version their anchors refer to.
type CommentSync struct {
	Version int64    `json:"version"`
	Threads []Thread `json:"threads"`
}

// CommentSync returns the threads as comment:sync carries them.
func (r *Room) CommentSync() CommentSync {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.commentSyncLocked()
}

func (r *Room) commentSyncLocked() CommentSync {
	return CommentSync{Version: r.plan.version, Threads: r.threadsLocked()}
}

type (
	msgThread struct {
		Type   string `json:"type"` // comment:thread
		Thread Thread `json:"thread"`
	}
	msgCommentSync struct {
		Type    string   `json:"type"` // comment:sync
		ID      string   `json:"id,omitempty"`
		Version int64    `json:"version"`
		Threads []Thread `json:"threads"`
	}
	msgCommentStarted struct {
		Type   string `json:"type"` // comment:started: the answer to comment:start
		ID     string `json:"id,omitempty"`
		Thread string `json:"thread"`
	}
	msgTyping struct {
		Type   string `json:"type"` // comment:typing
		Thread string `json:"thread"`
		Login  string `json:"login"`
		Name   string `json:"name,omitempty"`
	}
	inCommentStart struct {
		Type string `json:"type"`
		ID   string `json:"id,omitempty"`
		NewThread
	}
	inCommentReply struct {
		Type   string `json:"type"`
		ID     string `json:"id,omitempty"`
		Thread string `json:"thread"`
		Text   string `json:"text"`
	}
	inCommentThread struct {
		Type   string `json:"type"`
		ID     string `json:"id,omitempty"`
		Thread string `json:"thread"`
	}
)

// maxCommentsBytes bounds the comments section of a read_plan page.
const maxCommentsBytes = 4000

// commentsSection is read_plan's list of open and accepted threads:
//
//	comments: 1 open, 1 accepted (id status lines anchor; quote; notes)
//	c1a2 open lines 3-3 anchored
//	  quote: Use Postgres for everything.
//	  @ada: Why not SQLite?
//	c9f0 accepted lines 7-7 changed, revised by the Planner
//	  quote: Ship in May.
//	  @bob: Say June.
//
// Quotes and notes are shown on one line and cut at 200 bytes; threads past
// budget are counted, not shown.
func commentsSection(threads []Thread, budget int) string {
	open, accepted := 0, 0
	for _, t := range threads {
		switch t.Status {
		case ThreadOpen:
			open++
		case ThreadAccepted:
			accepted++
		}
	}
	if open+accepted == 0 {
		return ""
	}
	head := fmt.Sprintf("comments: %d open, %d accepted (id status lines anchor; quote; notes)\n", open, accepted)
	var b strings.Builder
	b.WriteString(head)
	left := 0
	const more = "  … %d more threads not shown\n"
	for i, t := range threads {
		if t.Status != ThreadOpen && t.Status != ThreadAccepted {
			continue
		}
		var e strings.Builder
		lines := "orphaned"
		if t.Passage.State != AnchorOrphaned {
			lines = fmt.Sprintf("lines %d-%d %s", t.Passage.StartLine, t.Passage.EndLine, t.Passage.State)
		}
		fmt.Fprintf(&e, "%s %s %s", t.ID, t.Status, lines)
		if t.Status == ThreadAccepted && t.Result != nil {
			switch t.Result.State {
			case ResultRevised:
				e.WriteString(", revised by the Planner")
			case ResultRevising:
				e.WriteString(", being revised in this turn")
			case ResultNone:
				e.WriteString(", the Planner changed nothing")
			case ResultNoPlan:
				e.WriteString(", not revised: no Planner was attached")
			}
		}
		e.WriteString("\n  quote: " + truncUTF8(oneLine(t.Passage.Quote), 200) + "\n")
		for _, n := range t.Notes {
			e.WriteString("  @" + oneLine(n.Author) + ": " + truncUTF8(oneLine(n.Text), 200) + "\n")
		}
		if b.Len()+e.Len()+len(more)+8 > budget {
			for _, rest := range threads[i:] {
				if rest.Status == ThreadOpen || rest.Status == ThreadAccepted {
					left++
				}
			}
			break
		}
		b.WriteString(e.String())
	}
	if left > 0 {
		fmt.Fprintf(&b, more, left)
	}
	return b.String()
}

// InlineComments replaces each accepted thread's <Comment> line in source
// with its record as a Markdown quote (the passage, who accepted it, the
// notes), so an exported file reads on its own and imports again. Lines of
// threads not in ts are left as they are.
func InlineComments(source string, ts []Thread) string {
	byID := map[string]Thread{}
	for _, t := range ts {
		byID[t.ID] = t
	}
	return inlineMarks(source, commentMark(), func(id string) (string, bool) {
		t, ok := byID[id]
		if !ok {
			return "", false
		}
		var b strings.Builder
		b.WriteString("> **Accepted comment** (@" + t.DecidedBy + ") on: " + oneLine(t.Passage.Quote))
		for _, n := range t.Notes {
			b.WriteString("\n>\n> @" + n.Author + ": " + strings.ReplaceAll(n.Text, "\n", "\n> "))
		}
		return b.String(), true
	})
}
