package room

// Accepting a comment thread (docs/room-protocol.md, "comment:accept,
// comment:dismiss"): the thread freezes, its <Comment> line is written
// after the passage's last block, and a Planner turn is asked to revise
// exactly that passage; the blocks that turn writes become the thread's
// result, which ends with the turn's reply. Without a Planner the decision
// is still recorded.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

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
	// The prompt goes to the Planner as the message's text; Chat shows the
	// message as the line its details describe, not the prompt.
	details, _ := json.Marshal(map[string]any{"comment": acceptedLine{Thread: t.ID, Section: sectionOf(r.plan.text, t.Passage)}})
	msg, err := r.postLocked(ctx, Message{Role: RolePerson, Author: who.Login, Text: prompt, Details: details})
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

// noRevision says why nobody revises an accepted passage, in Chopin's
// words (the refusal's own text is the agent protocol's, about machines).
func noRevision(err error) string {
	var re *Error
	if errors.As(err, &re) && re.Code != CodePlannerNotAttached {
		return "The decision is recorded, but the Planner could not take it (" + strings.TrimSuffix(re.Message, ".") + "). Ask the Planner in Chat to revise this passage once it can."
	}
	return "The decision is recorded, but nobody will revise this passage until a Planner attaches. Connect a Planner, then ask it in Chat to revise this passage."
}

// acceptedLine is what Chat shows for the message an Accept posts: who
// accepted a comment (the message's author) on which section.
type acceptedLine struct {
	Thread  string `json:"thread"`
	Section string `json:"section,omitempty"` // the heading above the passage, if any
}

// sectionOf is the text of the last heading at or above the passage.
func sectionOf(text string, p Passage) string {
	if p.State == AnchorOrphaned || p.StartLine == 0 {
		return ""
	}
	lines := strings.Split(text, "\n")
	section := ""
	for _, b := range Blocks(text) {
		if b.StartLine > p.StartLine {
			break
		}
		if b.Type == BlockHeading && b.StartLine-1 < len(lines) {
			section = strings.TrimSpace(strings.TrimRight(strings.TrimLeft(lines[b.StartLine-1], "# "), "# "))
		}
	}
	return section
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
