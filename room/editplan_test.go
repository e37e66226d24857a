package room

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// basePlan's blocks: 0 heading, 1 paragraph, 2 list, 3 heading, 4 paragraph.
const basePlan = "# Plan\n\nIntro.\n\n- a\n- b\n\n## Risks\n\nNone yet.\n"

func blockIndex(i int) *int       { return &i }
func contentOf(s string) *string  { return &s }
func planAt3(src string) PlanView { return PlanView{Revision: 3, Source: src} }

func TestEditPlan(t *testing.T) {
	tests := []struct {
		name   string
		source string
		ops    []Operation
		want   string
	}{
		{"insert after a block", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(1), Content: contentOf("New.")}},
			"# Plan\n\nIntro.\n\nNew.\n\n- a\n- b\n\n## Risks\n\nNone yet.\n"},
		{"insert first", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(-1), Content: contentOf("New.")}},
			"New.\n\n# Plan\n\nIntro.\n\n- a\n- b\n\n## Risks\n\nNone yet.\n"},
		{"insert after the last block", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(4), Content: contentOf("End.")}},
			basePlan + "\nEnd.\n"},
		{"insert_root", basePlan, []Operation{{Op: OpInsertRoot, Content: contentOf("## Open questions\n\n- who?")}},
			basePlan + "\n## Open questions\n\n- who?\n"},
		{"replace", basePlan, []Operation{{Op: OpReplace, Index: blockIndex(2), Content: contentOf("- a\n- b\n- c")}},
			"# Plan\n\nIntro.\n\n- a\n- b\n- c\n\n## Risks\n\nNone yet.\n"},
		{"replace with several blocks", basePlan, []Operation{{Op: OpReplace, Index: blockIndex(1), Content: contentOf("One.\n\nTwo.")}},
			"# Plan\n\nOne.\n\nTwo.\n\n- a\n- b\n\n## Risks\n\nNone yet.\n"},
		{"replace_root", basePlan, []Operation{{Op: OpReplaceRoot, Content: contentOf("# New plan\n")}}, "# New plan\n"},
		{"move first", basePlan, []Operation{{Op: OpMove, Index: blockIndex(4), To: blockIndex(-1)}},
			"None yet.\n\n# Plan\n\nIntro.\n\n- a\n- b\n\n## Risks\n"},
		{"move last", basePlan, []Operation{{Op: OpMove, Index: blockIndex(0), To: blockIndex(4)}},
			"Intro.\n\n- a\n- b\n\n## Risks\n\nNone yet.\n\n# Plan\n"},
		{"delete", basePlan, []Operation{{Op: OpDelete, Index: blockIndex(2)}},
			"# Plan\n\nIntro.\n\n## Risks\n\nNone yet.\n"},
		{"indexes are as of the revision, whatever the batch does", basePlan, []Operation{
			{Op: OpDelete, Index: blockIndex(0)},
			{Op: OpReplace, Index: blockIndex(1), Content: contentOf("Intro, revised.")},
			{Op: OpInsert, Index: blockIndex(2), Content: contentOf("After the list.")},
			{Op: OpMove, Index: blockIndex(4), To: blockIndex(1)},
			{Op: OpInsert, Index: blockIndex(0), Content: contentOf("Where the title was.")},
		}, "Where the title was.\n\nIntro, revised.\n\nNone yet.\n\n- a\n- b\n\nAfter the list.\n\n## Risks\n"},
		{"insertions after one block keep the batch's order", basePlan, []Operation{
			{Op: OpInsert, Index: blockIndex(0), Content: contentOf("First.")},
			{Op: OpMove, Index: blockIndex(4), To: blockIndex(0)},
			{Op: OpInsert, Index: blockIndex(0), Content: contentOf("Third.")},
		}, "# Plan\n\nFirst.\n\nNone yet.\n\nThird.\n\nIntro.\n\n- a\n- b\n\n## Risks\n"},
		{"untouched text keeps its spacing", "# A\n\n\n\nB\n\n\nC\n\n\n", []Operation{{Op: OpReplace, Index: blockIndex(2), Content: contentOf("D")}},
			"# A\n\n\n\nB\n\nD\n"},
		{"leading blank lines and a missing final line break are kept", "\n\n# A\n\nB", []Operation{{Op: OpReplace, Index: blockIndex(1), Content: contentOf("C")}},
			"\n\n# A\n\nC\n"},
		{"content is trimmed and its line endings normalised", basePlan, []Operation{{Op: OpReplace, Index: blockIndex(1), Content: contentOf("\r\n  \nOne\r\ntwo\rthree  \n\n\n")}},
			"# Plan\n\nOne\ntwo\nthree\n\n- a\n- b\n\n## Risks\n\nNone yet.\n"},
		{"insert after a decision card", "Text.\n\n<Decision id=\"d\" />\n", []Operation{{Op: OpInsert, Index: blockIndex(1), Content: contentOf("More.")}},
			"Text.\n\n<Decision id=\"d\" />\n\nMore.\n"},
		{"edit around a decision card", "Text.\n\n<Decision id=\"d\" />\n\nEnd.\n", []Operation{
			{Op: OpReplace, Index: blockIndex(0), Content: contentOf("New text.")}, {Op: OpMove, Index: blockIndex(2), To: blockIndex(-1)},
		}, "End.\n\nNew text.\n\n<Decision id=\"d\" />\n"},
		{"an empty plan gains content", "", []Operation{{Op: OpInsertRoot, Content: contentOf("# Plan")}}, "# Plan\n"},
		{"a component with Markdown inside", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(0), Content: contentOf("<Callout type=\"note\">\n\nCareful.\n\n</Callout>")}},
			"# Plan\n\n<Callout type=\"note\">\n\nCareful.\n\n</Callout>\n\nIntro.\n\n- a\n- b\n\n## Risks\n\nNone yet.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EditPlan(planAt3(tt.source), nil, EditPlanArgs{Revision: 3, Operations: tt.ops})
			if err != nil {
				t.Fatalf("EditPlan: %v", err)
			}
			if got != tt.want {
				t.Errorf("EditPlan\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestEditPlanRefusals(t *testing.T) {
	const withCard = "Text.\n\n<Decision id=\"d\" />\n\nEnd.\n"
	fifty := make([]Operation, 51)
	for i := range fifty {
		fifty[i] = Operation{Op: OpInsertRoot, Content: contentOf("x")}
	}
	tests := []struct {
		name    string
		source  string
		ops     []Operation
		code    string
		message string
	}{
		{"no operations", basePlan, nil, CodeInvalidOperation, "A batch holds 1 to 50 operations; this one has 0."},
		{"too many operations", basePlan, fifty, CodeInvalidOperation, "A batch holds 1 to 50 operations; this one has 51."},
		{"unknown op", basePlan, []Operation{{Op: "append", Content: contentOf("x")}}, CodeInvalidOperation,
			`Operation 0 has op "append"; use insert, insert_root, replace, replace_root, move or delete.`},
		{"missing index", basePlan, []Operation{{Op: OpReplace, Content: contentOf("x")}}, CodeInvalidOperation, "Operation 0 (replace) needs index."},
		{"missing content", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(0)}}, CodeInvalidOperation, "Operation 0 (insert) needs content."},
		{"missing to", basePlan, []Operation{{Op: OpMove, Index: blockIndex(0)}}, CodeInvalidOperation, "Operation 0 (move) needs to."},
		{"field the op does not take", basePlan, []Operation{{Op: OpDelete, Index: blockIndex(0), Content: contentOf("x")}}, CodeInvalidOperation, "Operation 0 (delete) takes no content."},
		{"index past the end", basePlan, []Operation{{Op: OpDelete, Index: blockIndex(5)}}, CodeInvalidOperation,
			"Operation 0 (delete) names block 5; the outline at this revision has blocks 0 to 4."},
		{"negative index", basePlan, []Operation{{Op: OpReplace, Index: blockIndex(-1), Content: contentOf("x")}}, CodeInvalidOperation,
			"Operation 0 (replace) names block -1; the outline at this revision has blocks 0 to 4."},
		{"insert before -1", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(-2), Content: contentOf("x")}}, CodeInvalidOperation,
			"Operation 0 (insert) names block -2; the outline at this revision has blocks 0 to 4."},
		{"move to a block that is not there", basePlan, []Operation{{Op: OpMove, Index: blockIndex(0), To: blockIndex(9)}}, CodeInvalidOperation,
			"Operation 0 (move) names block 9 as to; use -1 for the start or a block from 0 to 4."},
		{"move after itself", basePlan, []Operation{{Op: OpMove, Index: blockIndex(2), To: blockIndex(2)}}, CodeInvalidOperation, "Operation 0 moves block 2 after itself."},
		{"move after a moving block", basePlan, []Operation{{Op: OpMove, Index: blockIndex(0), To: blockIndex(1)}, {Op: OpMove, Index: blockIndex(1), To: blockIndex(4)}}, CodeInvalidOperation,
			"Operation 0 moves block 0 after block 1, which this batch also moves. Move it after a block that stays."},
		{"a block changed twice", basePlan, []Operation{{Op: OpReplace, Index: blockIndex(1), Content: contentOf("x")}, {Op: OpDelete, Index: blockIndex(1)}}, CodeInvalidOperation,
			"Operations 0 and 1 both change block 1; a batch may replace, move or delete a block once."},
		{"replace_root with company", basePlan, []Operation{{Op: OpReplaceRoot, Content: contentOf("x")}, {Op: OpDelete, Index: blockIndex(1)}}, CodeInvalidOperation,
			"replace_root replaces the whole plan, so it must be alone in its batch; this batch has 2 operations."},
		{"replace with nothing", basePlan, []Operation{{Op: OpReplace, Index: blockIndex(1), Content: contentOf(" \n\n")}}, CodeInvalidOperation,
			"Operation 0 replaces block 1 with nothing; use delete to remove a block."},
		{"insert nothing", basePlan, []Operation{{Op: OpInsertRoot, Content: contentOf("")}}, CodeInvalidOperation, "Operation 0 (insert_root) has no content."},
		{"authoring a decision card", basePlan, []Operation{{Op: OpInsertRoot, Content: contentOf("<Decision id=\"x\" />")}}, CodeReservedComponent,
			"Operation 0's content holds <Decision, a component only Chopin writes. Ask a question with ask instead; its card is placed for you."},
		{"a decision card inside content", basePlan, []Operation{{Op: OpReplace, Index: blockIndex(1), Content: contentOf("See <Decision id=\"x\"/>.")}}, CodeReservedComponent,
			"Operation 0's content holds <Decision, a component only Chopin writes. Ask a question with ask instead; its card is placed for you."},
		{"replacing a decision card", withCard, []Operation{{Op: OpReplace, Index: blockIndex(1), Content: contentOf("x")}}, CodeReservedComponent,
			"Operation 0 would replace block 1, which holds a decision card. Decision cards are placed by Chopin; edit the blocks around them."},
		{"deleting a decision card", withCard, []Operation{{Op: OpDelete, Index: blockIndex(1)}}, CodeReservedComponent,
			"Operation 0 would delete block 1, which holds a decision card. Decision cards are placed by Chopin; edit the blocks around them."},
		{"moving a decision card", withCard, []Operation{{Op: OpMove, Index: blockIndex(1), To: blockIndex(-1)}}, CodeReservedComponent,
			"Operation 0 would move block 1, which holds a decision card. Decision cards are placed by Chopin; edit the blocks around them."},
		{"a card inside another block", "<div>\n<Decision id=\"d\" />\n</div>\n\nEnd.\n", []Operation{{Op: OpDelete, Index: blockIndex(0)}}, CodeReservedComponent,
			"Operation 0 would delete block 0, which holds a decision card. Decision cards are placed by Chopin; edit the blocks around them."},
		{"replace_root over decision cards", withCard, []Operation{{Op: OpReplaceRoot, Content: contentOf("x")}}, CodeReservedComponent,
			"The plan has 1 decision cards and replace_root would remove them. Replace the blocks around them instead."},
		{"emptied", "# A\n\nB\n", []Operation{{Op: OpDelete, Index: blockIndex(0)}, {Op: OpDelete, Index: blockIndex(1)}}, CodeEmptyDocument,
			"This batch would leave the plan with no content. Keep at least one block, or replace it."},
		{"only decision cards left", withCard, []Operation{{Op: OpDelete, Index: blockIndex(0)}, {Op: OpDelete, Index: blockIndex(2)}}, CodeEmptyDocument,
			"This batch would leave the plan with no content. Keep at least one block, or replace it."},
		{"too large", basePlan, []Operation{{Op: OpInsertRoot, Content: contentOf(strings.Repeat("x", MaxSourceBytes))}}, CodeDocumentTooLarge,
			"The plan would be 262191 bytes; a plan holds at most 262144. Shorten it or split it into another document."},
		{"unclosed fence swallows what follows", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(0), Content: contentOf("```go\nfunc f()")}}, CodeInvalidOperation,
			"Operation 0's content runs into what follows it; close every code fence and component it opens."},
		{"content continues the list before it", basePlan, []Operation{{Op: OpInsert, Index: blockIndex(2), Content: contentOf("  more about b")}}, CodeInvalidOperation,
			"Operation 0's content would join block 2 before it; start it with a line that begins a block of its own."},
		{"an unclosed block moved into the middle", "A\n\n```\nunclosed", []Operation{{Op: OpMove, Index: blockIndex(1), To: blockIndex(-1)}}, CodeInvalidOperation,
			"Operation 0's content runs into what follows it; close every code fence and component it opens."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EditPlan(planAt3(tt.source), nil, EditPlanArgs{Revision: 3, Operations: tt.ops})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("EditPlan = %v, want %s", err, tt.code)
			}
			if e.Code != tt.code || e.Message != tt.message {
				t.Errorf("EditPlan = %s %q\nwant %s %q", e.Code, e.Message, tt.code, tt.message)
			}
		})
	}
}

func TestEditPlanStale(t *testing.T) {
	seen := Blocks(basePlan)                                            // what the Planner read at revision 2
	current := strings.Replace(basePlan, "Intro.", "Intro, edited.", 1) // block 1 changed since
	current = strings.Replace(current, "\n\nNone yet.\n", "\n", 1)      // block 4 is gone
	ops := []Operation{{Op: OpDelete, Index: blockIndex(2)}}

	tests := []struct {
		name    string
		given   int64
		seen    []Block
		changed []int
	}{
		{"the Planner's outline is known", 2, seen, []int{1, 4}},
		{"the outline at that revision is forgotten", 1, nil, []int{0, 1, 2, 3}},
		{"a revision from the future", 9, seen, []int{1, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EditPlan(PlanView{Revision: 3, Source: current}, tt.seen, EditPlanArgs{Revision: tt.given, Operations: ops})
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeStaleRevision || e.Stale == nil {
				t.Fatalf("EditPlan = %v, want %s with details", err, CodeStaleRevision)
			}
			want := fmt.Sprintf("The plan is at revision 3, not %d: it changed since you read it, so nothing was applied. "+
				"Check the changed blocks in the current outline and send the batch again with revision 3.", tt.given)
			if e.Message != want {
				t.Errorf("message %q\nwant %q", e.Message, want)
			}
			if e.Stale.Revision != 3 || !slices.Equal(e.Stale.Changed, tt.changed) || !slices.Equal(e.Stale.Blocks, Blocks(current)) {
				t.Errorf("stale details = %+v, want revision 3, changed %v and the current outline", *e.Stale, tt.changed)
			}
		})
	}

	t.Run("wire form", func(t *testing.T) {
		_, err := EditPlan(PlanView{Revision: 5, Source: "# A\n"}, Blocks("# A\n"), EditPlanArgs{Revision: 4, Operations: ops})
		got, _ := json.Marshal(err)
		want := `{"code":"stale-revision","message":"The plan is at revision 5, not 4: it changed since you read it, so nothing was applied. ` +
			`Check the changed blocks in the current outline and send the batch again with revision 5.","stale":{"revision":5,"changed":[],` +
			`"blocks":[{"index":0,"type":"heading","startLine":1,"endLine":1,"digest":"` + Digest("# A") + `"}]}}`
		if string(got) != want {
			t.Errorf("stale error JSON\n got %s\nwant %s", got, want)
		}
	})
}

func TestParseEditPlanArgs(t *testing.T) {
	got, err := ParseEditPlanArgs([]byte(`{"revision":7,"operations":[{"op":"move","index":0,"to":-1},{"op":"insert_root","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := EditPlanArgs{Revision: 7, Operations: []Operation{{Op: "move", Index: blockIndex(0), To: blockIndex(-1)}, {Op: "insert_root", Content: contentOf("x")}}}
	if gotJSON, wantJSON := mustJSON(got), mustJSON(want); gotJSON != wantJSON {
		t.Errorf("ParseEditPlanArgs = %s, want %s", gotJSON, wantJSON)
	}
	for _, input := range []string{
		`{"revision":7,"ops":[]}`,
		`{"revision":7,"operations":[{"op":"delete","index":0,"block":1}]}`,
		`{"revision":"7","operations":[]}`,
		`{"revision":7,"operations":[]} trailing`,
	} {
		var e *Error
		if _, err := ParseEditPlanArgs([]byte(input)); !errors.As(err, &e) || e.Code != CodeInvalidOperation {
			t.Errorf("ParseEditPlanArgs(%s) = %v, want %s", input, err, CodeInvalidOperation)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestEditPlanMoveKeepsBlocks moves and deletes random blocks of random
// plans and checks that every other block survives with its digest.
func TestEditPlanMoveKeepsBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200; i++ {
		source := randomDocument(r, 2+r.IntN(20))
		blocks := Blocks(source)
		if len(blocks) < 2 {
			continue
		}
		from, to := r.IntN(len(blocks)), r.IntN(len(blocks)+1)-1
		if from == to || decisionTag().MatchString(BlockSource(source, blocks[from])) {
			continue // refused, as TestEditPlanRefusals shows
		}
		out, err := EditPlan(PlanView{Source: source}, nil, EditPlanArgs{Operations: []Operation{{Op: OpMove, Index: &from, To: &to}}})
		if e := (*Error)(nil); errors.As(err, &e) && e.Code == CodeInvalidOperation {
			continue // an unclosed fence, or a block that joins its new neighbour: refused, as it should be
		}
		if err != nil {
			t.Fatalf("move %d after %d in\n%s\n: %v", from, to, source, err)
		}
		digests := func(bs []Block) []string {
			var d []string
			for _, b := range bs {
				d = append(d, b.Digest)
			}
			slices.Sort(d)
			return d
		}
		if !slices.Equal(digests(Blocks(out)), digests(blocks)) {
			t.Fatalf("move %d after %d changed the blocks of\n%s\ninto\n%s", from, to, source, out)
		}
	}
}
