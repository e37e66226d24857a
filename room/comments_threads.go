package room

// What people do with comment threads, and the frames that carry them
// (docs/room-protocol.md, "Comments": comment:sync, comment:thread,
// comment:start, comment:reply, comment:dismiss, comment:typing): start a
// thread on a passage, checked against the server's own text; reply;
// dismiss; tell the others one is writing; and the checks and the save
// every change to a thread goes through.

import (
	"context"
	"fmt"
	"strings"
)

func checkNote(text string) (string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return "", errorf(CodeInvalidArgument, "A comment needs some text.")
	}
	if len(text) > MaxCommentNoteBytes {
		return "", errorf(CodeCommentTooLarge, "A comment holds at most %d bytes of text; this one has %d.", MaxCommentNoteBytes, len(text))
	}
	if err := checkNoteText(text); err != nil {
		return "", err
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
	r.comments.stored[t.ID] = t.Passage
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
