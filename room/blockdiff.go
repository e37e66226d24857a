package room

// This file compares two versions of a plan block by block, for a person
// reading what changed between them (the history's diff,
// docs/http-api.md): the outline's blocks (Blocks) are paired by their
// text, and a block that changed carries the words that changed in it.
// It uses the bounded comparison the change sets use (diff.go), so the
// time it takes grows with the plans' lengths and no faster: a block too
// long to compare word by word, or one past the comparison's budget, is
// shown as a whole-block change.

import "strings"

// Block diff operations.
const (
	BlockSame    = "same"
	BlockChanged = "changed"
	BlockAdded   = "added"
	BlockRemoved = "removed"
)

// Word diff operations.
const (
	WordSame    = "same"
	WordRemoved = "removed"
	WordAdded   = "added"
)

// blockDiffWordBytes is the longest block, on either side, compared word
// by word; a longer one is a whole-block change.
const blockDiffWordBytes = diffWordBytes

// BlockChange is one block of a diff: kept (same), changed (Old to New,
// with Words), added or removed (Text). Heading is the text of the
// nearest heading at or above the block, on the side it is shown from
// (the new text's, for a removed block the old's).
type BlockChange struct {
	Op      string       `json:"op"`
	Heading string       `json:"heading,omitempty"`
	Text    string       `json:"text,omitempty"`
	Old     string       `json:"old,omitempty"`
	New     string       `json:"new,omitempty"`
	Words   []WordChange `json:"words,omitempty"`
}

// WordChange is a run of a changed block's text: kept, removed or added.
// The removed and same runs, in order, spell the old text; the added and
// same runs the new.
type WordChange struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// DiffBlocks compares before with after block by block, in the order of
// after, each removed block where it stood. Both must be normalised (see
// NormalizeLineEndings).
func DiffBlocks(before, after string) []BlockChange {
	bb, ab := Blocks(before), Blocks(after)
	d, hunks := blockHunks(bb, ab)
	// Each text's lines split once: BlockSource keeps only the last text's,
	// and the two texts take turns.
	la, lb := splitLines(before), splitLines(after)
	srcA := func(i int) string { return la.span(bb[i].StartLine, bb[i].EndLine) }
	srcB := func(i int) string { return lb.span(ab[i].StartLine, ab[i].EndLine) }
	headA, headB := headings(bb, srcA), headings(ab, srcB)

	out := make([]BlockChange, 0, max(len(bb), len(ab)))
	i, j := 0, 0
	for _, h := range append(hunks, hunk{len(bb), len(bb), len(ab), len(ab)}) {
		for ; i < h.a0; i, j = i+1, j+1 {
			out = append(out, BlockChange{Op: BlockSame, Text: srcB(j)})
		}
		na, nb := h.a1-h.a0, h.b1-h.b0
		for k := range min(na, nb) {
			o, n := srcA(h.a0+k), srcB(h.b0+k)
			out = append(out, BlockChange{Op: BlockChanged, Heading: headB[h.b0+k], Old: o, New: n, Words: d.wordChanges(o, n)})
		}
		for k := min(na, nb); k < na; k++ {
			out = append(out, BlockChange{Op: BlockRemoved, Heading: headA[h.a0+k], Text: srcA(h.a0 + k)})
		}
		for k := min(na, nb); k < nb; k++ {
			out = append(out, BlockChange{Op: BlockAdded, Heading: headB[h.b0+k], Text: srcB(h.b0 + k)})
		}
		i, j = h.a1, h.b1
	}
	return out
}

// blockHunks compares two lists of blocks by their digests, with the
// bounded comparison the change sets use: the differ it used (for the
// word diffs that follow, within the same budget) and its hunks.
func blockHunks(bb, ab []Block) (*differ, []hunk) {
	ids := make(map[string]int32, len(bb)+len(ab))
	idsOf := func(blocks []Block) []int32 {
		out := make([]int32, len(blocks))
		for i, b := range blocks {
			id, ok := ids[b.Digest]
			if !ok {
				id = int32(len(ids) + 1) // numbered from 1, as tokenIDs does
				ids[b.Digest] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib := idsOf(bb), idsOf(ab)
	d := &differ{budget: diffBudget, distinct: len(ids)}
	return d, d.seq(ia, ib)
}

// textHeadings is, for each block of text, the text of the heading it is
// or is under.
func textHeadings(text string, blocks []Block) []string {
	ls := splitLines(text)
	return headings(blocks, func(i int) string { return ls.span(blocks[i].StartLine, blocks[i].EndLine) })
}

// headings is, for each block, the text of the heading it is or is under
// (headingAbove's, for every block in one pass); src is a block's text.
func headings(blocks []Block, src func(int) string) []string {
	out := make([]string, len(blocks))
	cur := ""
	for i, b := range blocks {
		if b.Type == BlockHeading {
			line := src(i)
			if nl := strings.IndexByte(line, '\n'); nl >= 0 {
				line = line[:nl] // a setext heading's text is its first line
			}
			cur = strings.TrimSpace(strings.TrimRight(strings.TrimLeft(line, "# "), "# "))
		}
		out[i] = cur
	}
	return out
}

// wordChanges is the word diff of o to n: runs kept, removed and added.
// A block longer than blockDiffWordBytes, or one the comparison's budget
// no longer covers, is one removal of o and one addition of n.
func (d *differ) wordChanges(o, n string) []WordChange {
	var out []WordChange
	add := func(op, text string) {
		if text == "" {
			return
		}
		if k := len(out) - 1; k >= 0 && out[k].Op == op {
			out[k].Text += text
			return
		}
		out = append(out, WordChange{Op: op, Text: text})
	}
	if len(o) > blockDiffWordBytes || len(n) > blockDiffWordBytes || d.budget <= 0 {
		add(WordRemoved, o)
		add(WordAdded, n)
		return out
	}
	a, b := splitWords(o), splitWords(n)
	if d.wordIDs == nil {
		d.wordIDs = map[string]int32{}
	}
	clear(d.wordIDs)
	ia, ib := d.tokenIDs(a, b, d.wordIDs, false)
	hunks := cleanupHunks(d.seq(ia, ib), a.offs, b.offs)
	pa := 0
	for _, h := range hunks {
		add(WordSame, o[a.offs[pa]:a.offs[h.a0]])
		add(WordRemoved, o[a.offs[h.a0]:a.offs[h.a1]])
		add(WordAdded, n[b.offs[h.b0]:b.offs[h.b1]])
		pa = h.a1
	}
	add(WordSame, o[a.offs[pa]:a.offs[a.n()]])
	return out
}
