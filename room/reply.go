package room

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// A Planner's reply streams into Chat as one message: created when the turn
// starts, its text growing part by part, its reasoning and tool rows kept in
// details, and its status set once when the turn ends.
//
// Streaming text is provisional until the turn ends, so it is broadcast as it
// arrives but saved at most once per replySaveEvery (and at the end): an
// fsync per token would cap a reply at a few hundred parts a second. A
// crash loses at most the last second of a reply still streaming.

// Reply statuses.
const (
	ReplyStreaming = "streaming"
	ReplyDone      = "done"
	ReplyFailed    = "failed"
	ReplyStopped   = "stopped" // a person stopped the Planner mid-reply
)

// replySaveEvery bounds how often a streaming reply is saved.
const replySaveEvery = time.Second

// deltaEvery bounds how often a reply under load sends its members
// chat:delta. Every frame costs each socket a write system call, so a
// stream of deltas arriving less than deltaQuiet apart (faster than 5,000
// a second) is sent together, at most deltaEvery apart. A delta that
// follows the previous one by deltaQuiet or more goes at once, whenever
// the last frame went: a Planner streaming at 1,000 parts a second, even
// with jitter, gets a frame per part and no added delay. (Waiting for a
// timer shorter than a millisecond is no remedy: an idle Go program
// sleeps at least a millisecond for one.)
const (
	deltaEvery = time.Millisecond
	deltaQuiet = 200 * time.Microsecond
)

// maxToolRowJSON bounds a tool row's stored input and result: Work details
// shows what a call did, not every byte of a large page or plan.
const maxToolRowJSON = 32 << 10

// What one reply keeps, whatever the Planner sends: a turn may stream text
// or call tools for as long as it likes, but its message is stored, sent to
// every tab and kept in the database, so it is bounded. Past a bound the
// turn goes on and ends as it would; what it said or did after is not kept,
// and a line in the reply says where it was cut.
const (
	// MaxReplyText bounds a reply's text and reasoning together, in bytes.
	MaxReplyText = 1 << 20
	// MaxReplyDetails bounds the tool rows' inputs and results and the
	// images' words of a reply together, in bytes. Past it a row shows
	// only the call and how it ended.
	MaxReplyDetails = 1 << 20
	// MaxReplyToolRows bounds the rows of a reply's Work details.
	MaxReplyToolRows = 500
	// MaxReplyBytes is the most a reply's text and details hold together.
	MaxReplyBytes = MaxReplyText + MaxReplyDetails + MaxReplyToolRows*512
)

// unfinishedCall is the failure of a call still running when its turn ended.
const unfinishedCall = "This call had not finished when the turn ended, so it has no result."

// The lines that say where a reply was cut: the first where its text
// stopped, the others at its end.
const (
	textCutLine = "\n\n*Chopin kept no more of this reply's text: it reached 1 MiB, the most one reply keeps. " +
		"The Planner's turn went on; what it wrote after this point is not shown.*"
	rowsCutLine    = "\n\n*%d more tool calls are not listed in Work details: one reply lists at most 500.*"
	detailsCutLine = "\n\n*Work details shows the inputs and results of the first %d tool calls only: " +
		"one reply keeps at most 1 MiB of them.*"
	imagesCutLine = "\n\n*%d more images are not shown: one reply keeps at most 1 MiB of Work details and images.*"
)

// ReplyDetails is a Planner reply's details: what Chat shows folded under it.
type ReplyDetails struct {
	Reasoning string    `json:"reasoning,omitempty"`
	Tools     []ToolRow `json:"tools,omitempty"` // "Work details", in the order the calls started
	Error     string    `json:"error,omitempty"` // failed: why the turn failed
	// Images a tool made and upload_plan_image stored, in the order they
	// were made, and the image blocks not shown (reply_images.go).
	Images        []ReplyImage   `json:"images,omitempty"`
	RefusedImages []RefusedImage `json:"refusedImages,omitempty"`
}

// ToolRow is one tool call under "Work details".
type ToolRow struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Host       bool            `json:"host"`   // one of Chopin's host tools, not the Planner's own
	Status     string          `json:"status"` // running, done or failed
	DurationMs int64           `json:"durationMs"`
	Input      json.RawMessage `json:"input,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *ToolRowError   `json:"error,omitempty"` // failed with a structured tool error
}

// ToolRowError is a structured tool error as Work details shows it: "Failed",
// the kind (or code), and the message as plain text.
type ToolRowError struct {
	Code    string `json:"code"`
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message"`
}

// PlannerReply is a Planner's message while its turn runs. Its methods may be
// called from any goroutine, but a turn's calls are expected in order.
type PlannerReply struct {
	room   *Room
	saving sync.Mutex // serialises saves, so the last one written is the newest

	// guarded by room.mu
	msg            Message
	text           strings.Builder
	reasoning      strings.Builder
	textUnits      int // UTF-16 length of the text: the "at" of its next delta
	reasoningUnits int
	details        ReplyDetails
	dirty          bool
	saveQueued     bool
	savedAt        time.Time
	done           bool

	pending     []msgChatDelta // deltas not yet sent, at most one per field
	flushQueued bool
	flushedAt   time.Time
	deltaAt     time.Time // when the last delta arrived

	textKept      int             // bytes of text and reasoning, against MaxReplyText
	textCut       bool            // the text reached MaxReplyText: no more is kept
	detailsKept   int             // bytes of rows' JSON and images' words, against MaxReplyDetails
	fullRows      int             // rows kept with their input and result, once detailsCut
	detailsCut    bool            // the details reached MaxReplyDetails: rows are kept bare
	droppedImages int             // images past MaxReplyDetails, not shown
	droppedRows   int             // calls past MaxReplyToolRows, not listed
	dropped       map[string]bool // their IDs, so a call's later events count once (at most maxDroppedIDs)
}

// maxDroppedIDs bounds the IDs of unlisted calls a reply remembers; past it
// only their first (running) events are counted.
const maxDroppedIDs = 10_000

// StartReply posts the Planner's message for a turn, empty and streaming,
// authored by the Planner's owner.
func (r *Room) StartReply(ctx context.Context, author string) (*PlannerReply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, err := r.postLocked(ctx, Message{Role: RolePlanner, Author: author, Status: ReplyStreaming})
	if err != nil {
		return nil, err
	}
	p := &PlannerReply{room: r, msg: m, savedAt: r.hub.now()}
	if r.replies == nil {
		r.replies = map[string]*PlannerReply{}
	}
	r.replies[m.ID] = p
	r.comments.replyStartedLocked(m.ID)
	return p, nil
}

// ID is the reply's message ID.
func (p *PlannerReply) ID() string { return p.msg.ID }

// Text appends to the reply's text.
func (p *PlannerReply) Text(delta string) { p.append(&p.text, &p.textUnits, "text", delta) }

// Reasoning appends to the reply's reasoning, which Chat shows folded.
func (p *PlannerReply) Reasoning(delta string) {
	p.append(&p.reasoning, &p.reasoningUnits, "reasoning", delta)
}

func (p *PlannerReply) append(b *strings.Builder, units *int, field, delta string) {
	if delta == "" {
		return
	}
	r := p.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.done || p.textCut {
		return
	}
	if p.textKept+len(delta) > MaxReplyText {
		p.cutTextLocked()
		return
	}
	p.textKept += len(delta)
	at := *units
	b.WriteString(delta)
	*units += utf16Len(delta)
	p.queueDeltaLocked(field, at, delta)
	p.changedLocked()
}

// queueDeltaLocked sends a delta now when the stream is idle (nothing
// pending, and the last delta came deltaQuiet ago or the last frame went
// deltaEvery ago), else joins it to the field's pending one and sends that
// within deltaEvery.
func (p *PlannerReply) queueDeltaLocked(field string, at int, delta string) {
	now := p.room.hub.now()
	idle := now.Sub(p.deltaAt) >= deltaQuiet || now.Sub(p.flushedAt) >= deltaEvery
	p.deltaAt = now
	if len(p.pending) == 0 && idle {
		p.flushedAt = now
		p.room.broadcastLocked(msgChatDelta{Type: "chat:delta", Message: p.msg.ID, Field: field, At: at, Delta: delta})
		return
	}
	i := 0
	for i < len(p.pending) && p.pending[i].Field != field {
		i++
	}
	if i == len(p.pending) {
		p.pending = append(p.pending, msgChatDelta{Type: "chat:delta", Message: p.msg.ID, Field: field, At: at})
	}
	p.pending[i].Delta += delta
	if !p.flushQueued {
		p.flushQueued = true
		time.AfterFunc(max(p.flushedAt.Add(deltaEvery).Sub(now), 0), p.flush)
	}
}

func (p *PlannerReply) flush() {
	p.room.mu.Lock()
	defer p.room.mu.Unlock()
	p.flushQueued = false
	p.flushLocked()
}

// flushLocked sends the pending deltas; a tool row or the end waits for
// them, so members see the reply in the order it was made.
func (p *PlannerReply) flushLocked() {
	for _, d := range p.pending {
		p.room.broadcastLocked(d)
	}
	if len(p.pending) > 0 {
		p.pending = p.pending[:0]
		p.flushedAt = p.room.hub.now()
	}
}

// Tool adds a tool row, or replaces the row with the same ID.
func (p *PlannerReply) Tool(row ToolRow) {
	row.Input, row.Result = capJSON(row.Input), capJSON(row.Result)
	r := p.room
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.done {
		return
	}
	p.flushLocked()
	i := 0
	for i < len(p.details.Tools) && p.details.Tools[i].ID != row.ID {
		i++
	}
	old := 0
	if i < len(p.details.Tools) {
		old = rowBytes(p.details.Tools[i])
	}
	switch {
	case i == len(p.details.Tools) && len(p.details.Tools) >= MaxReplyToolRows:
		p.dropRowLocked(row)
		return
	case p.detailsKept-old+rowBytes(row) > MaxReplyDetails:
		// The row still shows the call and how it ended; its input and
		// result are what no longer fit.
		row.Input, row.Result = nil, nil
		if i < len(p.details.Tools) {
			row.Input = p.details.Tools[i].Input
		}
		if !p.detailsCut {
			p.detailsCut, p.fullRows = true, i
		}
	}
	p.detailsKept += rowBytes(row) - old
	if i == len(p.details.Tools) {
		p.details.Tools = append(p.details.Tools, row)
	} else {
		p.details.Tools[i] = row
	}
	r.broadcastLocked(msgChatTool{Type: "chat:tool", Message: p.msg.ID, Tool: row})
	p.changedLocked()
}

// Finish ends the reply with its status (done, failed or stopped) and, for
// failed, what went wrong. It saves the final state, then publishes it.
func (p *PlannerReply) Finish(ctx context.Context, status, failure string) error {
	r := p.room
	r.mu.Lock()
	if p.done {
		r.mu.Unlock()
		return nil
	}
	p.flushLocked()
	// A call still running when its turn ends (its agent vanished, or it
	// never reported a result) will not finish: Work details says so.
	for i, row := range p.details.Tools {
		if row.Status == "running" {
			row.Status = "failed"
			row.Error = &ToolRowError{Code: "call-unfinished", Message: unfinishedCall}
			p.details.Tools[i] = row
		}
	}
	if p.detailsCut {
		p.lineLocked(fmt.Sprintf(detailsCutLine, p.fullRows))
	}
	if p.droppedRows > 0 {
		p.lineLocked(fmt.Sprintf(rowsCutLine, p.droppedRows))
	}
	if p.droppedImages > 0 {
		p.lineLocked(fmt.Sprintf(imagesCutLine, p.droppedImages))
	}
	p.done = true
	p.msg.Status = status
	p.details.Error = failure
	final := p.messageLocked()
	r.mu.Unlock()

	p.saving.Lock()
	err := r.hub.persist.SaveMessage(ctx, final)
	p.saving.Unlock()

	r.mu.Lock()
	delete(r.replies, p.msg.ID)
	if err == nil {
		r.broadcastLocked(msgChatMessage{Type: "chat:message", Message: ForFrame(final)})
	}
	r.comments.replyFinishedLocked(ctx, r, p.msg.ID)
	r.mu.Unlock()
	return err
}

// cutTextLocked ends the text the reply keeps, with a line where it was cut.
func (p *PlannerReply) cutTextLocked() {
	p.textCut = true
	p.flushLocked()
	p.lineLocked(textCutLine)
	p.changedLocked()
}

// lineLocked adds one of Chopin's own lines to the reply's text, whatever
// its bound: the lines are few and short.
func (p *PlannerReply) lineLocked(line string) {
	at := p.textUnits
	p.text.WriteString(line)
	p.textUnits += utf16Len(line)
	p.room.broadcastLocked(msgChatDelta{Type: "chat:delta", Message: p.msg.ID, Field: "text", At: at, Delta: line})
}

// dropRowLocked counts a call that is not listed, once.
func (p *PlannerReply) dropRowLocked(row ToolRow) {
	if p.dropped == nil {
		p.dropped = map[string]bool{}
	}
	switch {
	case p.dropped[row.ID]:
	case len(p.dropped) < maxDroppedIDs:
		p.dropped[row.ID] = true
		p.droppedRows++
	case row.Status == "running":
		p.droppedRows++
	}
}

// rowBytes is what a tool row counts against MaxReplyDetails.
func rowBytes(row ToolRow) int { return len(row.Input) + len(row.Result) + len(row.Name) + len(row.ID) }

// changedLocked schedules a save within replySaveEvery of the last one.
func (p *PlannerReply) changedLocked() {
	p.dirty = true
	if p.saveQueued {
		return
	}
	p.saveQueued = true
	wait := max(p.savedAt.Add(replySaveEvery).Sub(p.room.hub.now()), 0)
	time.AfterFunc(wait, p.save)
}

func (p *PlannerReply) save() {
	p.saving.Lock()
	defer p.saving.Unlock()
	r := p.room
	r.mu.Lock()
	p.saveQueued = false
	if p.done || !p.dirty { // Finish writes the final state itself
		r.mu.Unlock()
		return
	}
	p.dirty = false
	p.savedAt = r.hub.now()
	m := p.messageLocked()
	r.mu.Unlock()
	if err := r.hub.persist.SaveMessage(context.Background(), m); err != nil {
		r.hub.logf(r).Error("save streaming reply", "message", m.ID, "err", err)
	}
}

// messageLocked is the reply as a Chat message now.
func (p *PlannerReply) messageLocked() Message {
	m := p.msg
	m.Text = p.text.String()
	m.UpdatedAt = p.room.hub.now().UnixMilli()
	d := p.details
	d.Reasoning = p.reasoning.String()
	if d.Reasoning != "" || len(d.Tools) > 0 || d.Error != "" || len(d.Images) > 0 || len(d.RefusedImages) > 0 {
		m.Details = encode(d)
	}
	return m
}

// overlayReplies shows streaming replies in ms as they are now.
func (r *Room) overlayReplies(ms []Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, m := range ms {
		if p := r.replies[m.ID]; p != nil {
			ms[i] = p.messageLocked()
		}
	}
}

// capJSON keeps a stored tool input or result within maxToolRowJSON: a
// longer one becomes a JSON string of its beginning that says so.
func capJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) <= maxToolRowJSON {
		return raw
	}
	cut := maxToolRowJSON
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	return encode(string(raw[:cut]) + "… (" + itoa(len(raw)) + " bytes in all; the rest is not kept)")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// utf16Len is s's length in UTF-16 code units, as a browser counts it.
func utf16Len(s string) int {
	n := 0
	for _, c := range s {
		n++
		if c >= 0x10000 {
			n++
		}
	}
	return n
}

// Room messages of a streaming reply.
type (
	msgChatDelta struct {
		Type    string `json:"type"` // chat:delta
		Message string `json:"message"`
		Field   string `json:"field"` // text or reasoning
		At      int    `json:"at"`    // the field's length in UTF-16 units before this delta
		Delta   string `json:"delta"`
	}
	msgChatTool struct {
		Type    string  `json:"type"` // chat:tool
		Message string  `json:"message"`
		Tool    ToolRow `json:"tool"`
	}
)
