package room

// The change an edit_plan batch commits, worked out from the batch rather
// than by comparing texts: the batch names the blocks it replaces, deletes,
// moves and inserts, so its change set says exactly that (docs/host-tools.md,
// "edit_plan"). Every block the batch does not name is kept, and so are the
// blank lines between blocks that stay neighbours; a replaced block is one
// replacement of the whole block; what the batch deletes, moves away or
// inserts between two blocks that stay is a deletion and an insertion of
// its own. Comment threads, the tabs' "Planner's changes" marks and the
// rebase of what people type at the same moment all follow from it.

import "slices"

// batchChange is a batch as the room commits it: its change set, and the
// blocks it moved, so comment threads on them can follow them.
type batchChange struct {
	changes ChangeSet
	moves   []blockMove
}

// blockMove is a block the batch moved: its old place [oldFrom, oldTo) and
// where it starts now, in UTF-16 code units.
type blockMove struct {
	oldFrom, oldTo, newFrom int
}

// change is the batch's change, once apply and join have made out. A
// replace_root batch replaces the whole plan: it is compared as any new
// whole plan is (DiffChangeSet).
func (e *edit) change(out string) batchChange {
	if e.root {
		return batchChange{changes: DiffChangeSet(e.source, out)}
	}
	var edits []textEdit
	oldPos, newPos := 0, 0
	for k, p := range e.pieces {
		// The blocks in place, kept or replaced, are in their old order;
		// what lies between two of them is a gap.
		b := p.block
		if b < 0 && p.op >= 0 && e.ops[p.op].Op == OpReplace {
			b = *e.ops[p.op].Index
		}
		if b < 0 {
			continue
		}
		from, to := e.blockBounds(b)
		span := e.spans[k]
		edits = appendGap(edits, e.source, out, textEdit{oldPos, from, newPos, span[0]})
		if p.block < 0 && e.source[from:to] != out[span[0]:span[1]] {
			edits = append(edits, textEdit{from, to, span[0], span[1]})
		}
		oldPos, newPos = to, span[1]
	}
	edits = appendGap(edits, e.source, out, textEdit{oldPos, len(e.source), newPos, len(out)})
	return batchChange{changes: changeSetOf(e.source, out, edits), moves: e.moves(out)}
}

// blockBounds is the byte range of original block i, without the line
// break after it.
func (e *edit) blockBounds(i int) (int, int) {
	_, end, _ := e.ls.bounds(e.blocks[i].EndLine)
	return e.ls.starts[e.blocks[i].StartLine-1], end
}

// appendGap adds the edits of a gap between two blocks in place: the blank
// lines both sides start and end with are kept, what the old side has
// between them is deleted, and what the new side has is inserted.
func appendGap(edits []textEdit, before, after string, g textEdit) []textEdit {
	o, n := before[g.oldFrom:g.oldTo], after[g.newFrom:g.newTo]
	if o == n {
		return edits
	}
	p := min(commonPrefix(o, n), blankRun(o), blankRun(n))
	s := min(commonSuffix(o[p:], n[p:]), blankRunEnd(o[p:]), blankRunEnd(n[p:]))
	mid := g.oldTo - s
	return append(edits,
		textEdit{g.oldFrom + p, mid, g.newFrom + p, g.newFrom + p},
		textEdit{mid, mid, g.newFrom + p, g.newTo - s})
}

// blankRun is how many bytes of s's start are spaces, tabs and line breaks.
func blankRun(s string) int {
	i := 0
	for i < len(s) && (s[i] == '\n' || s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// blankRunEnd is how many bytes of s's end are spaces, tabs and line breaks.
func blankRunEnd(s string) int {
	i := 0
	for i < len(s) && (s[len(s)-1-i] == '\n' || s[len(s)-1-i] == ' ' || s[len(s)-1-i] == '\t') {
		i++
	}
	return i
}

// moves lists the blocks the batch moved, in UTF-16 code units.
func (e *edit) moves(text string) []blockMove {
	var out []blockMove
	for k, p := range e.pieces {
		if p.op < 0 || e.ops[p.op].Op != OpMove {
			continue
		}
		from, to := e.blockBounds(*e.ops[p.op].Index)
		out = append(out, blockMove{oldFrom: from, oldTo: to, newFrom: e.spans[k][0]})
	}
	if len(out) == 0 {
		return nil
	}
	// Byte offsets to code units: one pass over each text for them all.
	var old, now []*int
	for i := range out {
		old = append(old, &out[i].oldFrom, &out[i].oldTo)
		now = append(now, &out[i].newFrom)
	}
	toUnits(e.source, old)
	toUnits(text, now)
	return out
}

// toUnits turns byte offsets of s into UTF-16 offsets, in place.
func toUnits(s string, offs []*int) {
	slices.SortFunc(offs, func(a, b *int) int { return *a - *b })
	at, units := 0, 0
	for _, o := range offs {
		units += UTF16Len(s[at:*o])
		at = *o
		*o = units
	}
}
