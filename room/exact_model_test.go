package room

// The change sets of the Planner's batches and of whole-plan replacements,
// against a model that knows where every character of the new plan came
// from: random batches of block operations (edit_plan) and random
// rewrites of a plan (PUT, update_document). Text outside the edited
// blocks never moves into a changed span: each of its characters is in a
// kept run of the change set, and that run takes it exactly where the
// model put it. And the change set applied to the old text gives the new.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomPlan is a plan of unique blocks of every common kind, with the
// separators, leading and trailing lines people leave.
func randomPlan(rng *rand.Rand, n int) string {
	var b strings.Builder
	b.WriteString([]string{"", "", "\n"}[rng.IntN(3)])
	for k := range n {
		if k > 0 {
			b.WriteString([]string{"\n\n", "\n\n", "\n\n", "\n\n\n"}[rng.IntN(4)])
		}
		switch rng.IntN(7) {
		case 0:
			fmt.Fprintf(&b, "## Part %d", k)
		case 1:
			fmt.Fprintf(&b, "Line %d one, the first.\nline %d two, é and 😀.", k, k)
		case 2:
			fmt.Fprintf(&b, "- item %d\n- item %d more", k, k)
		case 3:
			fmt.Fprintf(&b, "```\ncode %d\n```", k)
		case 4:
			fmt.Fprintf(&b, "> quoted %d", k)
		default:
			fmt.Fprintf(&b, "Paragraph %d says the team ships the rocket in May, with 😀 and é.", k)
		}
	}
	b.WriteString([]string{"\n", "\n", "", "\n\n"}[rng.IntN(4)])
	return b.String()
}

// newContent is content an operation writes: one or two new blocks.
func newContent(rng *rand.Rand, k int) string {
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("## New %d\n\nNew text %d, ünïcode 👩‍👩‍👧.", k, k)
	default:
		return fmt.Sprintf("New paragraph %d, é.", k)
	}
}

// unitChar is a character of the model's new text and where it came from:
// its UTF-16 offset in the old text, or -1 for text written since.
type unitChar struct {
	r      rune
	origin int
}

type originText struct{ chars []unitChar }

func (m *originText) String() string {
	var b strings.Builder
	for _, c := range m.chars {
		b.WriteRune(c.r)
	}
	return b.String()
}

// addOld adds old[from:to], each character with its UTF-16 offset in old.
func addOld(m *originText, old string, from, to int) {
	unit := UTF16Len(old[:from])
	for _, r := range old[from:to] {
		m.chars = append(m.chars, unitChar{r, unit})
		if r > 0xFFFF {
			unit += 2
		} else {
			unit++
		}
	}
}

// addNew adds text written since: no origin.
func addNew(m *originText, s string) {
	for _, r := range s {
		m.chars = append(m.chars, unitChar{r, -1})
	}
}

// checkKeptWhereModelSays fails unless every character of the model with
// an origin lies in a kept run of c that takes it to its place in the
// model's text.
func checkKeptWhereModelSays(t *testing.T, what string, old string, m *originText, c ChangeSet) {
	t.Helper()
	// Where each old unit goes through c's kept runs (-1: changed).
	goes := make([]int, UTF16Len(old))
	for i := range goes {
		goes[i] = -1
	}
	posA, posB := 0, 0
	for _, s := range c.sections {
		if s.kept {
			for i := range s.len {
				goes[posA+i] = posB + i
			}
			posB += s.len
		} else {
			posB += UTF16Len(s.insert)
		}
		posA += s.len
	}
	q := 0
	for _, ch := range m.chars {
		if ch.origin >= 0 && goes[ch.origin] != q {
			js, _ := c.MarshalJSON()
			where := "into a changed span"
			if goes[ch.origin] >= 0 {
				where = fmt.Sprintf("to %d", goes[ch.origin])
			}
			t.Fatalf("%s: %q at old offset %d belongs at %d, but the change set takes it %s\nold %q\nnew %q\nchanges %s",
				what, ch.r, ch.origin, q, where, old, m.String(), js)
		}
		if ch.r > 0xFFFF {
			q += 2
		} else {
			q++
		}
	}
}

// batchModel is what a batch does, worked out apart from edit_plan's own
// code from what docs/host-tools.md says a batch does: the new text with
// every character's origin.
func batchModel(old string, ops []Operation) *originText {
	blocks := Blocks(old)
	ls := splitLines(old)
	bounds := func(i int) (int, int) {
		_, end, _ := ls.bounds(blocks[i].EndLine)
		return ls.starts[blocks[i].StartLine-1], end
	}
	type item struct {
		block   int // an old block kept in place, or -1
		content string
	}
	var first, last []item
	after := make([][]item, len(blocks))
	replaced := map[int]string{}
	gone := map[int]bool{}
	put := func(at int, it item) {
		if at < 0 {
			first = append(first, it)
		} else {
			after[at] = append(after[at], it)
		}
	}
	for _, op := range ops {
		switch op.Op {
		case OpInsert:
			put(*op.Index, item{-1, *op.Content})
		case OpInsertRoot:
			last = append(last, item{-1, *op.Content})
		case OpReplace:
			replaced[*op.Index] = *op.Content
		case OpDelete:
			gone[*op.Index] = true
		case OpMove:
			gone[*op.Index] = true
			from, to := bounds(*op.Index)
			put(*op.To, item{-1, old[from:to]})
		}
	}
	items := first
	for i := range blocks {
		if c, ok := replaced[i]; ok {
			items = append(items, item{-1, c})
		} else if !gone[i] {
			items = append(items, item{i, ""})
		}
		items = append(items, after[i]...)
	}
	items = append(items, last...)

	m := &originText{}
	for k, it := range items {
		switch {
		case k == 0 && it.block == 0:
			from, _ := bounds(0)
			addOld(m, old, 0, from)
		case k == 0:
		case it.block > 0 && items[k-1].block == it.block-1:
			_, end := bounds(it.block - 1)
			from, _ := bounds(it.block)
			addOld(m, old, end, from)
		default:
			addNew(m, "\n\n")
		}
		if it.block >= 0 {
			from, to := bounds(it.block)
			addOld(m, old, from, to)
		} else {
			addNew(m, it.content)
		}
	}
	if lastItem := items[len(items)-1]; lastItem.block == len(blocks)-1 {
		_, end := bounds(lastItem.block)
		addOld(m, old, end, len(old))
	} else {
		addNew(m, "\n")
	}
	return m
}

// randomBatch is a batch edit_plan takes: each block replaced, moved or
// deleted at most once, moves after blocks that stay.
func randomBatch(rng *rand.Rand, nBlocks int, k *int) []Operation {
	var ops []Operation
	touched := map[int]bool{}
	moved := map[int]bool{}
	for range 1 + rng.IntN(6) {
		*k++
		i := rng.IntN(nBlocks)
		switch rng.IntN(6) {
		case 0, 1:
			if !touched[i] {
				touched[i] = true
				ops = append(ops, Operation{Op: OpReplace, Index: blockIndex(i), Content: contentOf(newContent(rng, *k))})
			}
		case 2:
			if !touched[i] && len(touched) < nBlocks-1 {
				touched[i] = true
				ops = append(ops, Operation{Op: OpDelete, Index: blockIndex(i)})
			}
		case 3:
			ops = append(ops, Operation{Op: OpInsert, Index: blockIndex(rng.IntN(nBlocks+1) - 1), Content: contentOf(newContent(rng, *k))})
		case 4:
			ops = append(ops, Operation{Op: OpInsertRoot, Content: contentOf(newContent(rng, *k))})
		case 5:
			to := rng.IntN(nBlocks+1) - 1
			if !touched[i] && to != i && !moved[to] {
				touched[i], moved[i] = true, true
				ops = append(ops, Operation{Op: OpMove, Index: blockIndex(i), To: blockIndex(to)})
			}
		}
	}
	// A move after a block the batch moves later is refused; drop those.
	var out []Operation
	for _, op := range ops {
		if op.Op != OpMove || !moved[*op.To] {
			out = append(out, op)
		}
	}
	return out
}

// TestEditPlanChangeSetAgainstModel: random batches on random plans,
// through the room as the Planner's tool runs them. The threads on the
// old blocks end as host-tools.md says: an untouched or moved block's
// reads as before, a replaced one's covers the replacement and says it
// changed, a deleted one's is orphaned.
func TestEditPlanChangeSetAgainstModel(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(27, 1))
	k := 1000
	applied := 0
	for run := range 300 {
		old := randomPlan(rng, 2+rng.IntN(10))
		r, _, tab := exactRoom(t, old)
		old = r.Plan().Source
		blocks := r.Plan().Blocks
		ids := map[int]string{}
		for _, b := range blocks {
			th, err := r.StartThread(ctx, Identity{Login: "ada"}, threadOn(r, BlockSource(old, b), "On this block."))
			if err != nil {
				t.Fatalf("run %d: a thread on block %d: %v", run, b.Index, err)
			}
			ids[b.Index] = th.ID
		}
		tab.take()
		ops := randomBatch(rng, len(blocks), &k)
		if len(ops) == 0 {
			continue
		}
		if _, err := r.EditPlan(ctx, EditPlanArgs{Revision: r.Plan().Revision, Operations: ops}, nil); err != nil {
			continue // content that would join the block before it, say
		}
		applied++
		what := fmt.Sprintf("run %d, batch %s", run, mustJSON(ops))
		model := batchModel(old, ops)
		now := r.Plan().Source
		if now != model.String() {
			t.Fatalf("%s: the plan is\n%q\nthe model says\n%q", what, now, model.String())
		}
		cs, _ := lastUpdate(t, tab.take())
		if got, err := cs.Apply(old); err != nil || got != now {
			t.Fatalf("%s: the change set gives %q, %v", what, got, err)
		}
		checkKeptWhereModelSays(t, what, old, model, cs)
		moves := 0
		fate := map[int]Operation{}
		for _, op := range ops {
			if op.Op == OpMove {
				moves++
			}
			if op.Index != nil && op.Op != OpInsert {
				fate[*op.Index] = op
			}
		}
		// One span per block replaced, and per run of blocks deleted or
		// inserted side by side; besides, only the blank lines around what
		// the batch wrote are made one.
		spans := 0
		for _, ch := range changesOf(old, cs) {
			if strings.TrimSpace(ch.removed) != "" || strings.TrimSpace(ch.insert) != "" {
				spans++
			}
		}
		if spans > len(ops)+moves {
			js, _ := cs.MarshalJSON()
			t.Errorf("%s: %d changed spans for %d operations: %s", what, spans, len(ops), js)
		}
		for _, b := range blocks {
			p := threadByID(t, r, ids[b.Index]).Passage
			reads := ""
			if p.State != AnchorOrphaned {
				reads = passageText(t, now, p)
			}
			op, ok := fate[b.Index]
			switch {
			case !ok || op.Op == OpMove:
				if p.State != AnchorExact || reads != p.Quote {
					t.Errorf("%s: the thread on block %d (%s) says %s and reads %q", what, b.Index, op.Op, p.State, reads)
				}
			case op.Op == OpReplace:
				if p.State != AnchorChanged || reads != *op.Content {
					t.Errorf("%s: the thread on replaced block %d says %s and reads %q", what, b.Index, p.State, reads)
				}
			case op.Op == OpDelete:
				if p.State != AnchorOrphaned {
					t.Errorf("%s: the thread on deleted block %d says %s and reads %q", what, b.Index, p.State, reads)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
	if applied < 150 {
		t.Errorf("only %d of 300 batches were applied: the walk does not exercise edit_plan", applied)
	}
}

// rewriteModel rewrites a plan as a person does in another editor: blocks
// kept, deleted, replaced, inserted, and words changed inside blocks. The
// characters of the blocks it keeps whole have their origins.
func rewriteModel(rng *rand.Rand, old string, k *int) *originText {
	blocks := Blocks(old)
	ls := splitLines(old)
	m := &originText{}
	sep := func() {
		if len(m.chars) > 0 {
			addNew(m, "\n\n")
		}
	}
	for _, b := range blocks {
		from := ls.starts[b.StartLine-1]
		_, to, _ := ls.bounds(b.EndLine)
		*k++
		switch rng.IntN(8) {
		case 0: // deleted
		case 1: // replaced
			sep()
			addNew(m, newContent(rng, *k))
		case 2: // a new block before it
			sep()
			addNew(m, newContent(rng, *k))
			sep()
			addOld(m, old, from, to)
		case 3, 4: // words changed inside it
			sep()
			words := strings.SplitAfter(old[from:to], " ")
			i := rng.IntN(len(words))
			switch rng.IntN(3) {
			case 0:
				words[i] = fmt.Sprintf("changed%d ", *k)
			case 1:
				words = append(words[:i], words[i+1:]...)
			default:
				words = append(words[:i], append([]string{fmt.Sprintf("added%d ", *k)}, words[i:]...)...)
			}
			addNew(m, strings.Join(words, ""))
		default:
			sep()
			addOld(m, old, from, to)
		}
	}
	if len(m.chars) == 0 {
		addNew(m, "# Everything went")
	}
	addNew(m, "\n")
	return m
}

// TestDiffChangeSetAgainstModel: random rewrites of random plans, as a PUT
// or update_document sends them, and random whole new texts.
func TestDiffChangeSetAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	k := 0
	for run := range 2000 {
		old := randomPlan(rng, 1+rng.IntN(14))
		m := rewriteModel(rng, old, &k)
		now := m.String()
		what := fmt.Sprintf("run %d", run)
		cs := DiffChangeSet(old, now)
		if got, err := cs.Apply(old); err != nil || got != now {
			t.Fatalf("%s: DiffChangeSet(%q, %q) gives %q, %v", what, old, now, got, err)
		}
		checkKeptWhereModelSays(t, what, old, m, cs)
		// Any two plans at all.
		other := randomPlan(rng, rng.IntN(6))
		if got, err := DiffChangeSet(old, other).Apply(old); err != nil || got != other {
			t.Fatalf("%s: DiffChangeSet(%q, %q) gives %q, %v", what, old, other, got, err)
		}
	}
}
