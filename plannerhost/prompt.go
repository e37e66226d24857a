package plannerhost

import (
	"context"
	"strings"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// What a turn tells the Planner (DESIGN.md section 8): the prompt is the
// person's message, "@<login>: <text>", after what was said in the room since
// the Planner's last reply; the instructions are the system prompt and the
// conversation before that, newest entries within a bound.

const (
	// TranscriptWindow is how many recent messages a turn looks at, and so
	// how far back a message can be retried.
	TranscriptWindow = 200
	// maxSinceBytes bounds what the prompt repeats of the room since the
	// last turn; maxConversationBytes the conversation in the instructions.
	// Both keep the newest entries. Together with the tools they stay far
	// below the 2 MiB frame.
	maxSinceBytes        = 16 << 10
	maxConversationBytes = 48 << 10
)

// SystemPrompt is the Planner's role, its tools and the document's
// dialect. The document's title and address follow it.
const SystemPrompt = `You are chopin, the Planner of a Chopin document: a plan (an implementation plan, a spec, an RFC) that people and you write together. Each document has three faces: the Plan, a Markdown document; a Chat shared by the people and you; and Decisions, question cards you ask and people answer. People address you in Chat with @chopin; your reply is your text in this turn.

How to work:
- Read before you write. read_plan shows the plan with its revision, an outline of its top-level blocks (index, type, lines, digest) and its lines. A long plan comes in pages: follow the next: line of each result.
- Change the plan with edit_plan: a batch of block operations addressed by block index at the revision you read. If the plan changed meanwhile, nothing is applied and the error lists the current revision, the changed indexes and the outline: adjust and send the batch again. Each result gives the new revision and outline, so you can keep editing without reading again.
- When a choice belongs to the people (a trade-off, a preference, a missing fact), ask them with ask instead of guessing: one card per question, with short options, placed after the block it concerns. ask waits for their answer. open_decisions lists questions still waiting.
- Keep Chat replies short: say what you changed and why, and what you need from the people. The plan holds the substance.

The document's dialect:
- Markdown (CommonMark with tables, fenced code, math) and a small MDX component set: <Callout type="note|tip|important|warning|danger">...</Callout>, <Tabs><Tab title="...">...</Tab></Tabs>, fenced mermaid diagrams and diff blocks.
- Raw HTML is never rendered; do not write it.
- <Decision id="..." /> lines are Chopin's own: each marks where a question card sits. Never write, change, move or delete one; edit_plan refuses it.
- A plan holds at most 262144 bytes and cannot be emptied.`

// turnRequest composes the turn for a person's @chopin message m.
func (h *Host) turnRequest(ctx context.Context, ch room.Channel, m room.Message) (agentconn.TurnRequest, error) {
	msgs, err := h.store.Messages(ctx, ch.ID, TranscriptWindow)
	if err != nil {
		return agentconn.TurnRequest{}, err
	}
	var earlier []room.Message
	if m.ID == "" { // a turn of the Planner's own, for an answer: after everything said
		earlier = append(earlier, msgs...)
	}
	for i, s := range msgs {
		if s.ID == m.ID {
			earlier = append(earlier, msgs[:i]...)
			break
		}
	}
	// The Planner's last finished reply divides what it has answered from
	// what it has not read yet. A failed or stopped reply does not: a forked
	// session branches from the last finished turn, so the messages around
	// a reply that failed must come again in the prompt.
	last := -1
	for i, e := range earlier {
		if e.Role == room.RolePlanner && e.Status == room.ReplyDone {
			last = i
		}
	}
	conversation, since := earlier[:last+1], earlier[last+1:]

	var prompt strings.Builder
	if lines := newest(since, maxSinceBytes); len(lines) > 0 {
		prompt.WriteString("Said in the room since your last reply:\n")
		for _, l := range lines {
			prompt.WriteString(l + "\n")
		}
		prompt.WriteString("\n")
	}
	if m.Author == "" {
		prompt.WriteString(m.Text)
	} else {
		prompt.WriteString("@" + m.Author + ": " + m.Text)
	}
	prompt.WriteString(room.ReferencesPrompt(room.MessageReferences(m)))

	var instr strings.Builder
	instr.WriteString(SystemPrompt)
	instr.WriteString("\n\nThis document: " + ch.Title + " (" + ch.URL + "), in the repository " + ch.Repository + ".")
	forkInstructions := instr.String() // a forked session holds the conversation already
	if lines := newest(conversation, maxConversationBytes); len(lines) > 0 {
		instr.WriteString("\n\nThe conversation so far")
		if len(lines) < len(conversation) {
			instr.WriteString(" (its latest entries)")
		}
		instr.WriteString(":\n")
		for _, l := range lines {
			instr.WriteString(l + "\n")
		}
	}

	tools := make([]wire.Tool, len(room.HostTools))
	for i, t := range room.HostTools {
		tools[i] = wire.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	tools = append(tools, h.previewTools(ch.ID)...)
	tools = append(tools, h.historyTools()...)
	refTools, err := h.referenceTools(ctx, ch.ID)
	if err != nil {
		return agentconn.TurnRequest{}, err
	}
	tools = append(tools, refTools...)
	return agentconn.TurnRequest{Mode: wire.ModePlanner, Prompt: prompt.String(),
		Instructions: strings.TrimSuffix(instr.String(), "\n"), Model: h.model, Tools: tools,
		Thread: chatThread, ForkInstructions: forkInstructions}, nil
}

// newest renders the newest messages that fit in most bytes, oldest first.
func newest(ms []room.Message, most int) []string {
	var out []string
	size := 0
	for i := len(ms) - 1; i >= 0; i-- {
		l := transcriptLine(ms[i])
		if l == "" {
			continue
		}
		if size+len(l) > most {
			break
		}
		size += len(l) + 1
		out = append(out, l)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// transcriptLine is one Chat entry as the Planner reads it.
func transcriptLine(m room.Message) string {
	switch m.Role {
	case room.RolePerson:
		return "@" + m.Author + ": " + m.Text
	case room.RolePlanner:
		l := "@chopin (you): " + m.Text
		if m.Status == room.ReplyFailed {
			l += " [this reply failed]"
		}
		return l
	case room.RoleSystem:
		return "(Chopin notice) " + m.Text
	}
	return ""
}

// chatThread is the thread of a document's Chat: with session-forks, each
// Chat turn's session forks from the last finished one on the same link.
const chatThread = "chat"
