package room

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// The Planner's host tools as a turn offers them: name, description and the
// JSON Schema of the input. docs/host-tools.md documents each with examples;
// the descriptions are what the model reads, so they say how to use the
// tool, not how it is built.

// ToolSpec is one host tool offered in a turn.
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Host tool names.
const (
	ToolReadPlan      = "read_plan"
	ToolEditPlan      = "edit_plan"
	ToolAsk           = "ask"
	ToolOpenDecisions = "open_decisions"
)

// HostTools are the tools every Planner turn offers, in this order.
var HostTools = []ToolSpec{
	{
		Name: ToolReadPlan,
		Description: "Read the document's plan as text: a header (document, url, revision, size, shown, next), " +
			"the outline of the top-level blocks the shown lines overlap (index type lines digest), then the plan's lines verbatim after \"text:\". " +
			"One result holds at most 16000 bytes; when the plan is longer, the next: line names the exact call that continues " +
			"(read_plan with offset, and column for a line too long for one result). Following each next: returns every character exactly once. " +
			"Use the revision and the block indexes and digests it shows with edit_plan and ask.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"offset":{"type":"integer","minimum":1,"description":"The 1-based line to start at; default 1."},` +
			`"limit":{"type":"integer","minimum":1,"description":"The most lines to show; a result stops sooner when its 16000-byte budget requires, and says so."},` +
			`"column":{"type":"integer","minimum":1,"description":"The 1-based character of line offset to start at, to continue a line cut by the previous result."}` +
			`},"additionalProperties":false}`),
	},
	{
		Name: ToolEditPlan,
		Description: "Change the plan with a batch of 1 to 50 block operations, applied all or nothing as one change that every open editor receives. " +
			"Address blocks by their index in the outline at revision (as read_plan or the last edit_plan result gave them), whatever the other operations of the batch do. " +
			"Operations: insert {index, content} puts content after block index (-1 puts it first); insert_root {content} appends it; " +
			"replace {index, content}; replace_root {content} replaces the whole plan and must be alone in its batch; " +
			"move {index, to} puts block index after block to (-1 first); delete {index}. content is Markdown of one or more blocks. " +
			"When the plan changed since revision nothing is applied: the error gives the current revision, the indexes whose digests changed and the current outline; check them and send the batch again. " +
			"<Decision id=\"...\" /> and <Comment id=\"...\" /> lines are Chopin's own: they cannot be written, replaced or deleted. The plan cannot be emptied and holds at most 262144 bytes. " +
			"The result is the new revision and outline.",
		InputSchema: json.RawMessage(`{"type":"object","required":["revision","operations"],"properties":{` +
			`"revision":{"type":"integer","minimum":0,"description":"The revision the indexes refer to."},` +
			`"operations":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","required":["op"],"properties":{` +
			`"op":{"type":"string","enum":["insert","insert_root","replace","replace_root","move","delete"]},` +
			`"index":{"type":"integer","minimum":-1,"description":"The block the operation addresses (insert: the block to insert after, -1 for the start)."},` +
			`"to":{"type":"integer","minimum":-1,"description":"move: the block to move after, -1 for the start."},` +
			`"content":{"type":"string","description":"Markdown of one or more blocks."}` +
			`},"additionalProperties":false}}` +
			`},"additionalProperties":false}`),
	},
	{
		Name: ToolAsk,
		Description: "Put questions to the people as Decisions and wait for their answer: one card per question, placed after block (by the index and digest read_plan or edit_plan gave) or at the end of the plan. " +
			"A question's first line is the card's heading; what follows is its Markdown body. Offer options with a short label and a one-line description; people may also write their own answer. " +
			"The result is the outcome (answered with every answer, or cancelled with the answers given so far) and current_plan, the plan as it is once they answered.",
		InputSchema: json.RawMessage(`{"type":"object","required":["questions"],"properties":{` +
			`"questions":` + string(wire.QuestionsSchema()) + `,` +
			`"block":{"type":"object","required":["index","digest"],"properties":{` +
			`"index":{"type":"integer","minimum":0},"digest":{"type":"string","pattern":"^sha256:[0-9a-f]{64}$"}},"additionalProperties":false}` +
			`},"additionalProperties":false}`),
	},
	{
		Name: ToolOpenDecisions,
		Description: "List the document's open Decisions, the questions still waiting for an answer (open, or reopened by a person for a new answer: previous holds the answers it had), " +
			"the Decisions people discarded lately (newest first; a discarded card's question no longer needs an answer), and current_plan. " +
			"current_plan leaves out the source and blocks when it would be over 8000 bytes, and says so in source_omitted: then read the plan with read_plan.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
	},
}

// EditResult is what edit_plan returns: the plan's revision after the edit
// and its outline, so the next batch can address blocks without a read.
type EditResult struct {
	Revision int64   `json:"revision"`
	Blocks   []Block `json:"blocks"`
}

// EditPlan runs the edit_plan host tool against the room: the revision check,
// the batch and the commit happen under the room's lock, so nothing can slip
// in between. The change is an ordinary server update: every open editor
// rebases onto it, marked as the Planner's (plannerClientID), and it says
// exactly which blocks the batch wrote (editchange.go). seen is the outline
// the Planner was shown at args.Revision, or nil when it is not known (see
// EditPlan).
func (r *Room) EditPlan(ctx context.Context, args EditPlanArgs, seen []Block) (EditResult, error) {
	defer r.checkpointIfDue(ctx) // after the lock is let go
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writableLocked(); err != nil {
		return EditResult{}, err
	}
	view := PlanView{Title: r.channel.Title, URL: r.channel.URL, Revision: r.plan.version, Source: r.plan.text}
	text, batch, err := editPlan(view, seen, args)
	if err != nil {
		return EditResult{}, err
	}
	if text != r.plan.text {
		before := r.plan.text
		if _, err := r.commitBatchLocked(ctx, text, batch); err != nil {
			return EditResult{}, err
		}
		r.comments.plannerEditedLocked(ctx, r, before, text)
	}
	return EditResult{Revision: r.plan.version, Blocks: Blocks(text)}, nil
}

// OpenDecisions returns the cards waiting for an answer, open or reopened,
// oldest first, and the newest discarded ones (at most maxDiscardedListed),
// newest first.
func (r *Room) OpenDecisions() (open, discarded []Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	open, discarded = []Decision{}, []Decision{}
	for _, c := range r.cards.cards {
		if waiting(c.Status) {
			open = append(open, c)
		}
	}
	for i := len(r.cards.cards) - 1; i >= 0; i-- {
		if c := r.cards.cards[i]; c.Status == DecisionDiscarded {
			discarded = append(discarded, c)
		}
	}
	sort.SliceStable(discarded, func(i, j int) bool { return discarded[i].UpdatedAt > discarded[j].UpdatedAt })
	return open, discarded[:min(len(discarded), maxDiscardedListed)]
}

// maxDiscardedListed is how many discarded cards open_decisions names.
const maxDiscardedListed = 20
