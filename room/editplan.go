package room

import (
	"fmt"
	"strings"
)

// MaxOperations is the most operations one edit_plan batch holds.
const MaxOperations = 50

// Operation kinds of edit_plan.
const (
	OpInsert      = "insert"       // content after block index; index -1 puts it first
	OpInsertRoot  = "insert_root"  // content at the end of the plan
	OpReplace     = "replace"      // block index becomes content
	OpReplaceRoot = "replace_root" // the whole plan becomes content; alone in its batch
	OpMove        = "move"         // block index goes after block to; to -1 puts it first
	OpDelete      = "delete"       // block index goes
)

// EditPlanArgs are edit_plan's arguments:
//
//	{
//	  "revision": 7,
//	  "operations": [
//	    { "op": "replace", "index": 2, "content": "## Rollout\n\nA small pilot first." },
//	    { "op": "insert", "index": 2, "content": "- [ ] tell support" },
//	    { "op": "move", "index": 5, "to": -1 },
//	    { "op": "delete", "index": 6 },
//	    { "op": "insert_root", "content": "## Open questions" }
//	  ]
//	}
//
// Every index is a block index in the outline as of revision, whatever the
// other operations of the batch do: the batch is applied as one change.
// Several insertions after one block keep their order in the batch, and a
// block moved after another comes after the content inserted there earlier
// in the batch. content is Markdown of one or more blocks; its leading and
// trailing blank lines are dropped and the plan keeps a blank line around it.
type EditPlanArgs struct {
	Revision   int64       `json:"revision"`
	Operations []Operation `json:"operations"`
}

// An Operation is one step of an edit_plan batch. Index and To are pointers
// because 0 is a block index: absent and 0 must differ.
type Operation struct {
	Op      string  `json:"op"`
	Index   *int    `json:"index,omitempty"`
	To      *int    `json:"to,omitempty"`
	Content *string `json:"content,omitempty"`
}

// Stale is what a stale-revision refusal tells the Planner so it can retry
// without reading the whole plan again.
type Stale struct {
	Revision int64   `json:"revision"` // the plan's current revision
	Changed  []int   `json:"changed"`  // indexes whose digest differs from the outline at the given revision
	Blocks   []Block `json:"blocks"`   // the current outline
}

// ParseEditPlanArgs decodes edit_plan's input strictly.
func ParseEditPlanArgs(input []byte) (EditPlanArgs, error) {
	var args EditPlanArgs
	if err := decodeStrict(input, &args); err != nil {
		return args, errorf(CodeInvalidOperation,
			`edit_plan takes {"revision": n, "operations": [{"op", "index"?, "to"?, "content"?}]}: %v.`, err)
	}
	return args, nil
}

// EditPlan is the edit_plan host tool: it applies the batch to plan, all or
// nothing, and returns the new source. The caller commits it as the next
// revision.
//
// When args.Revision is not plan.Revision nothing is applied and the error's
// Stale lists the current outline and the indexes whose digests differ from
// seen, the outline at args.Revision. A caller that no longer knows that
// outline passes nil, and every index counts as changed: the Planner must
// read again before it edits. Indexes past the current outline's end in
// Changed are blocks that are gone.
func EditPlan(plan PlanView, seen []Block, args EditPlanArgs) (string, error) {
	out, _, err := editPlan(plan, seen, args)
	return out, err
}

// editPlan is EditPlan, with the batch as the change the room commits.
func editPlan(plan PlanView, seen []Block, args EditPlanArgs) (string, batchChange, error) {
	blocks := Blocks(plan.Source)
	if args.Revision != plan.Revision {
		return "", batchChange{}, staleError(plan.Revision, args.Revision, seen, blocks)
	}
	ops := args.Operations
	if len(ops) == 0 || len(ops) > MaxOperations {
		return "", batchChange{}, errorf(CodeInvalidOperation, "A batch holds 1 to %d operations; this one has %d.", MaxOperations, len(ops))
	}
	e := edit{source: plan.Source, ls: splitLines(plan.Source), blocks: blocks, ops: ops}
	out, err := e.apply()
	if err != nil {
		return "", batchChange{}, err
	}
	if len(out) > MaxSourceBytes {
		return "", batchChange{}, errorf(CodeDocumentTooLarge, "The plan would be %d bytes; a plan holds at most %d. Shorten it or split it into another document.", len(out), MaxSourceBytes)
	}
	after := Blocks(out)
	if !hasContent(after) {
		return "", batchChange{}, errorf(CodeEmptyDocument, "This batch would leave the plan with no content. Keep at least one block, or replace it.")
	}
	if err := e.checkBoundaries(after); err != nil {
		return "", batchChange{}, err
	}
	if err := CheckReserved(plan.Source, out); err != nil {
		return "", batchChange{}, err // the rules below should make this unreachable; the check is cheap
	}
	return out, e.change(out), nil
}

func staleError(current, given int64, seen, blocks []Block) *Error {
	changed := []int{}
	for i := 0; i < max(len(seen), len(blocks)); i++ {
		if seen == nil || i >= len(seen) || i >= len(blocks) || seen[i].Digest != blocks[i].Digest {
			changed = append(changed, i)
		}
	}
	return &Error{
		Code: CodeStaleRevision,
		Message: fmt.Sprintf("The plan is at revision %d, not %d: it changed since you read it, so nothing was applied. "+
			"Check the changed blocks in the current outline and send the batch again with revision %d.", current, given, current),
		Stale: &Stale{Revision: current, Changed: changed, Blocks: blocks},
	}
}

func hasContent(blocks []Block) bool {
	for _, b := range blocks {
		if b.Type != BlockDecision {
			return true
		}
	}
	return false
}

// edit is one batch being applied.
type edit struct {
	source string
	ls     lines
	blocks []Block
	ops    []Operation
	pieces []piece  // the result, in order; set by apply
	spans  [][2]int // where each piece is in the result, in bytes; set by join
	root   bool     // the batch is one replace_root; set by apply
}

// A piece of the result: an original block kept as it was, or content an
// operation wrote.
type piece struct {
	text  string
	block int // the original block's index, or -1
	op    int // the operation that wrote it, or -1
}

func (e *edit) apply() (string, error) {
	n := len(e.blocks)
	var (
		first    []piece // before block 0
		after    = make([][]piece, n)
		last     []piece // insert_root
		replaced = map[int]piece{}
		gone     = map[int]bool{} // moved or deleted
		moved    = map[int]bool{}
		touched  = map[int]int{} // block -> the operation that replaces, moves or deletes it
	)
	put := func(at int, p piece) {
		if at < 0 {
			first = append(first, p)
		} else {
			after[at] = append(after[at], p)
		}
	}
	for i, op := range e.ops {
		if err := e.check(i, op); err != nil {
			return "", err
		}
		if op.Index != nil && op.Op != OpInsert {
			if j, ok := touched[*op.Index]; ok {
				return "", errorf(CodeInvalidOperation, "Operations %d and %d both change block %d; a batch may replace, move or delete a block once.", j, i, *op.Index)
			}
			touched[*op.Index] = i
		}
		switch op.Op {
		case OpInsert:
			put(*op.Index, piece{text: normalizeContent(*op.Content), block: -1, op: i})
		case OpInsertRoot:
			last = append(last, piece{text: normalizeContent(*op.Content), block: -1, op: i})
		case OpReplace:
			replaced[*op.Index] = piece{text: normalizeContent(*op.Content), block: -1, op: i}
		case OpReplaceRoot:
			if len(e.ops) > 1 {
				return "", errorf(CodeInvalidOperation, "replace_root replaces the whole plan, so it must be alone in its batch; this batch has %d operations.", len(e.ops))
			}
			if marks := Decisions(e.source); len(marks) > 0 {
				return "", errorf(CodeReservedComponent, "The plan has %d decision cards and replace_root would remove them. Replace the blocks around them instead.", len(marks))
			}
			e.root = true
			return normalizeContent(*op.Content) + "\n", nil
		case OpMove:
			gone[*op.Index], moved[*op.Index] = true, true
			put(*op.To, piece{text: e.blockSource(*op.Index), block: -1, op: i})
		case OpDelete:
			gone[*op.Index] = true
		}
	}
	for i, op := range e.ops {
		if op.Op == OpMove && moved[*op.To] {
			return "", errorf(CodeInvalidOperation, "Operation %d moves block %d after block %d, which this batch also moves. Move it after a block that stays.", i, *op.Index, *op.To)
		}
	}

	e.pieces = append(e.pieces, first...)
	for i := range e.blocks {
		if p, ok := replaced[i]; ok {
			e.pieces = append(e.pieces, p)
		} else if !gone[i] {
			e.pieces = append(e.pieces, piece{text: e.blockSource(i), block: i, op: -1})
		}
		e.pieces = append(e.pieces, after[i]...)
	}
	e.pieces = append(e.pieces, last...)
	return e.join(), nil
}

// operationFields says which fields each op needs; it takes no others.
var operationFields = map[string]struct{ index, to, content bool }{
	OpInsert:      {index: true, content: true},
	OpInsertRoot:  {content: true},
	OpReplace:     {index: true, content: true},
	OpReplaceRoot: {content: true},
	OpMove:        {index: true, to: true},
	OpDelete:      {index: true},
}

// check refuses an operation that is malformed on its own.
func (e *edit) check(i int, op Operation) error {
	n := len(e.blocks)
	want, ok := operationFields[op.Op]
	if !ok {
		return errorf(CodeInvalidOperation, "Operation %d has op %q; use insert, insert_root, replace, replace_root, move or delete.", i, op.Op)
	}
	for _, f := range []struct {
		name      string
		want, has bool
	}{{"index", want.index, op.Index != nil}, {"to", want.to, op.To != nil}, {"content", want.content, op.Content != nil}} {
		if f.want && !f.has {
			return errorf(CodeInvalidOperation, "Operation %d (%s) needs %s.", i, op.Op, f.name)
		}
		if !f.want && f.has {
			return errorf(CodeInvalidOperation, "Operation %d (%s) takes no %s.", i, op.Op, f.name)
		}
	}
	if op.Index != nil {
		lowest := 0
		if op.Op == OpInsert {
			lowest = -1 // insert after -1: before the first block
		}
		if *op.Index < lowest || *op.Index >= n {
			return errorf(CodeInvalidOperation, "Operation %d (%s) names block %d; the outline at this revision has blocks 0 to %d.", i, op.Op, *op.Index, n-1)
		}
		if op.Op != OpInsert && e.holdsReserved(*op.Index) {
			return errorf(CodeReservedComponent, "Operation %d would %s block %d, which holds a decision card. Decision cards are placed by Chopin; edit the blocks around them.", i, op.Op, *op.Index)
		}
	}
	if op.To != nil {
		if *op.To < -1 || *op.To >= n {
			return errorf(CodeInvalidOperation, "Operation %d (move) names block %d as to; use -1 for the start or a block from 0 to %d.", i, *op.To, n-1)
		}
		if *op.To == *op.Index {
			return errorf(CodeInvalidOperation, "Operation %d moves block %d after itself.", i, *op.Index)
		}
	}
	if op.Content != nil {
		if decisionTag().MatchString(*op.Content) {
			return errorf(CodeReservedComponent, "Operation %d's content holds <Decision, a component only Chopin writes. Ask a question with ask instead; its card is placed for you.", i)
		}
		if strings.TrimSpace(*op.Content) == "" {
			if op.Op == OpReplace {
				return errorf(CodeInvalidOperation, "Operation %d replaces block %d with nothing; use delete to remove a block.", i, *op.Index)
			}
			return errorf(CodeInvalidOperation, "Operation %d (%s) has no content.", i, op.Op)
		}
	}
	return nil
}

func (e *edit) holdsReserved(i int) bool {
	return decisionTag().MatchString(e.blockSource(i))
}

// blockSource is original block i's text. (BlockSource would split the
// plan into lines again for every block.)
func (e *edit) blockSource(i int) string {
	return e.ls.span(e.blocks[i].StartLine, e.blocks[i].EndLine)
}

// join lays the pieces out with a blank line between them. Between two
// original blocks that stay neighbours, and before the first and after the
// last block when they stay, the original text is kept, so an edit changes
// only the lines it names.
func (e *edit) join() string {
	var b strings.Builder
	b.Grow(len(e.source) + 256)
	for k, p := range e.pieces {
		switch {
		case k == 0 && p.block == 0:
			b.WriteString(e.source[:e.ls.starts[e.blocks[0].StartLine-1]])
		case k == 0:
		case p.block > 0 && e.pieces[k-1].block == p.block-1:
			_, end, _ := e.ls.bounds(e.blocks[p.block-1].EndLine)
			b.WriteString(e.source[end:e.ls.starts[e.blocks[p.block].StartLine-1]])
		default:
			b.WriteString("\n\n")
		}
		e.spans = append(e.spans, [2]int{b.Len(), b.Len() + len(p.text)})
		b.WriteString(p.text)
	}
	switch last := len(e.pieces) - 1; {
	case last < 0:
	case e.pieces[last].block >= 0 && e.pieces[last].block == len(e.blocks)-1:
		_, end, _ := e.ls.bounds(e.blocks[len(e.blocks)-1].EndLine)
		b.WriteString(e.source[end:])
	default:
		b.WriteString("\n")
	}
	return b.String()
}

// checkBoundaries refuses a result in which a piece does not start a block
// of its own: content with an unclosed code fence or component swallows
// what follows it, and content can join the block before it (an underline
// that turns a paragraph into a heading, an indented line that continues a
// list).
func (e *edit) checkBoundaries(after []Block) error {
	starts := make(map[int]bool, len(after))
	for _, b := range after {
		starts[b.StartLine] = true
	}
	line := 1 + countLeadingLines(e)
	for k, p := range e.pieces {
		if k > 0 && !starts[line] {
			prev := e.pieces[k-1]
			switch {
			case prev.op >= 0:
				return errorf(CodeInvalidOperation, "Operation %d's content runs into what follows it; close every code fence and component it opens.", prev.op)
			case p.op >= 0:
				return errorf(CodeInvalidOperation, "Operation %d's content would join block %d before it; start it with a line that begins a block of its own.", p.op, prev.block)
			default:
				return errorf(CodeInvalidOperation, "This batch would join block %d with the block after it; change the content around them.", prev.block)
			}
		}
		line += strings.Count(p.text, "\n") + 1 + separatorLines(e, k)
	}
	return nil
}

// countLeadingLines is how many lines join writes before the first piece.
func countLeadingLines(e *edit) int {
	if len(e.pieces) > 0 && e.pieces[0].block == 0 {
		return strings.Count(e.source[:e.ls.starts[e.blocks[0].StartLine-1]], "\n")
	}
	return 0
}

// separatorLines is how many lines lie between piece k and piece k+1.
func separatorLines(e *edit, k int) int {
	if k+1 >= len(e.pieces) {
		return 0
	}
	p, q := e.pieces[k], e.pieces[k+1]
	if q.block > 0 && p.block == q.block-1 {
		return e.blocks[q.block].StartLine - e.blocks[p.block].EndLine - 1
	}
	return 1
}

// normalizeContent makes content fit the plan: "\n" line endings only (the
// server keeps CodeMirror's view of the text), no blank lines or trailing
// spaces around it, since join puts exactly one blank line between blocks.
func normalizeContent(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimRight(s, " \t\n")
	for {
		nl := strings.IndexByte(s, '\n')
		if nl < 0 || !isBlank(s[:nl]) {
			return s
		}
		s = s[nl+1:]
	}
}
