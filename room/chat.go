package room

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// MaxMessageText bounds a person's Chat message, in bytes of UTF-8.
const MaxMessageText = 64 * 1024

// chatSnapshotSize is how many of the newest messages a joining member gets.
const chatSnapshotSize = 200

// maxChatSnapshotBytes bounds the messages of a chat:snapshot frame: a
// joining member gets the newest that fit in it, each cut to its first page
// when long (pages.go), and reads older ones page by page over HTTP.
const maxChatSnapshotBytes = MaxChatFrameBytes - 64

// newestWithin is the newest of msgs (oldest first) whose JSON fits in
// budget bytes together.
func newestWithin(msgs []FrameMessage, budget int) []FrameMessage {
	used := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		raw, _ := json.Marshal(msgs[i])
		if used+len(raw)+1 > budget {
			return msgs[i+1:]
		}
		used += len(raw) + 1
	}
	return msgs
}

// Message roles.
const (
	RolePerson  = "person"
	RolePlanner = "planner"
	RoleSystem  = "system"
)

// Message is one entry of a document's Chat.
type Message struct {
	ID        string          `json:"id"`
	ChannelID string          `json:"-"`
	Seq       int64           `json:"seq"`
	Role      string          `json:"role"`
	Author    string          `json:"author,omitempty"` // the login of a person or of the Planner's owner
	Text      string          `json:"text"`
	Status    string          `json:"status,omitempty"` // a Planner reply: streaming, done, failed
	CreatedAt int64           `json:"createdAt"`        // unix ms
	UpdatedAt int64           `json:"updatedAt"`
	Details   json.RawMessage `json:"details,omitempty"` // a Planner reply's reasoning, tool rows, runs
}

type chat struct {
	nextSeq int64
}

// interruptedReply is the failure of a reply that was still streaming when
// Chopin stopped without finishing it (a crash or a kill).
const interruptedReply = "Chopin stopped while this reply was being written."

func (c *chat) load(ctx context.Context, r *Room) error {
	recent, err := r.hub.persist.Messages(ctx, r.channelID, chatSnapshotSize)
	if err != nil {
		return err
	}
	c.nextSeq = 1
	if len(recent) > 0 {
		c.nextSeq = recent[len(recent)-1].Seq + 1
	}
	// A room opens with no reply streaming, so any reply still marked so was
	// cut off: say so rather than show it as forever in progress.
	for _, m := range recent {
		if m.Role != RolePlanner || m.Status != ReplyStreaming {
			continue
		}
		var d ReplyDetails
		if len(m.Details) > 0 {
			json.Unmarshal(m.Details, &d) // our own encoding; a damaged one just loses its details
		}
		d.Error = interruptedReply
		m.Status, m.Details, m.UpdatedAt = ReplyFailed, encode(d), r.hub.now().UnixMilli()
		if err := r.hub.persist.SaveMessage(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

var mention = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}_@])@chopin\b`) })

// MentionsPlanner reports whether text addresses the Planner: "@chopin" in
// any letter case, at a word boundary.
func MentionsPlanner(text string) bool { return mention().MatchString(text) }

// Say posts a person's message. A message that mentions @chopin goes to the
// Planner as a turn; when no Planner can take it the message is refused
// with the reason and nothing is kept.
func (r *Room) Say(ctx context.Context, who Identity, text string) (Message, error) {
	return r.say(ctx, who, text, nil)
}

// say is Say for a message with details: the files it carries (attachments.go).
func (r *Room) say(ctx context.Context, who Identity, text string, details json.RawMessage) (Message, error) {
	if strings.TrimSpace(text) == "" {
		return Message{}, errorf(CodeInvalidArgument, "A message needs some text.")
	}
	if len(text) > MaxMessageText {
		return Message{}, errorf(CodeMessageTooLarge, "A message holds at most %d bytes of text; this one has %d.", MaxMessageText, len(text))
	}
	return r.post(ctx, Message{Role: RolePerson, Author: who.Login, Text: text, Details: details}, MentionsPlanner(text))
}

// Invoke posts an instruction for the Planner from outside the room (MCP's
// invoke_planner) and starts a turn with it, whether or not it mentions
// @chopin: under author's name, or as a system follow-up when author is
// empty, with the documents it refers to (references.go). It follows a
// person's @chopin message's rules: refused with the reason, and nothing
// kept, when no Planner can take it.
func (r *Room) Invoke(ctx context.Context, author, text string, refs []ReferenceRequest) (Message, error) {
	if strings.TrimSpace(text) == "" {
		return Message{}, errorf(CodeInvalidArgument, "An instruction needs some text.")
	}
	if len(text) > MaxMessageText {
		return Message{}, errorf(CodeMessageTooLarge, "An instruction holds at most %d bytes of text; this one has %d.", MaxMessageText, len(text))
	}
	kept, err := r.hub.ResolveReferences(ctx, refs)
	if err != nil {
		return Message{}, err
	}
	m := Message{Role: RolePerson, Author: author, Text: text}
	if len(kept) > 0 {
		m.Details = encode(personDetails{References: kept})
	}
	if author == "" {
		m.Role = RoleSystem
	}
	return r.post(ctx, m, true)
}

// post stores a checked message and, when toPlanner, hands it to the
// Planner as a turn.
func (r *Room) post(ctx context.Context, msg Message, toPlanner bool) (Message, error) {
	r.mu.Lock()
	if err := r.writableLocked(); err != nil {
		r.mu.Unlock()
		return Message{}, err
	}
	if toPlanner {
		if err := r.hub.planner.Available(ctx, r.channel); err != nil {
			r.mu.Unlock()
			return Message{}, err
		}
	}
	m, err := r.postLocked(ctx, msg)
	ch := r.channel
	r.mu.Unlock()
	if err != nil || !toPlanner {
		return m, err
	}
	if err := r.hub.planner.Turn(ctx, ch, m); err != nil {
		// The Planner went away between the check and the hand-over.
		var re *Error
		reason := "the Planner could not take it"
		if asError(err, &re) {
			reason = re.Message
		}
		r.Notice(ctx, fmt.Sprintf("Your message was not sent to the Planner: %s", reason))
	}
	return m, nil
}

// Notice posts a system line in Chat.
func (r *Room) Notice(ctx context.Context, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.postLocked(ctx, Message{Role: RoleSystem, Text: text}); err != nil {
		r.hub.logf(r).Error("post notice", "err", err)
	}
}

// postLocked stores a new message and publishes it.
func (r *Room) postLocked(ctx context.Context, m Message) (Message, error) {
	now := r.hub.now().UnixMilli()
	m.ID, m.ChannelID, m.Seq, m.CreatedAt, m.UpdatedAt = newID(), r.channelID, r.chat.nextSeq, now, now
	if err := r.hub.persist.SaveMessage(ctx, m); err != nil {
		return Message{}, fmt.Errorf("save message: %w", err)
	}
	r.chat.nextSeq++
	r.broadcastLocked(msgChatMessage{Type: "chat:message", Message: ForFrame(m)})
	return m, nil
}

// Messages returns the newest Chat messages, oldest first. A Planner reply
// that is still streaming is shown as it is now, not as last saved.
func (r *Room) Messages(ctx context.Context, limit int) ([]Message, error) {
	ms, err := r.hub.persist.Messages(ctx, r.channelID, limit)
	if err != nil {
		return nil, err
	}
	r.overlayReplies(ms)
	return ms, nil
}
