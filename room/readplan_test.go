package room

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

const smallPlan = "# Launch plan\n\nShip the rocket.\n\n- fuel\n- crew\n\n<Decision id=\"d1\" />\n"

var smallView = PlanView{Title: "Launch plan", URL: "/documents/acme/rocket/launch-plan", Revision: 7, Source: smallPlan}

func TestReadPlanGolden(t *testing.T) {
	tests := []struct {
		name string
		args ReadPlanArgs
		want string
	}{
		{"whole plan", ReadPlanArgs{}, `document: Launch plan
url: /documents/acme/rocket/launch-plan
revision: 7
size: 69 bytes, 8 lines, 4 blocks
shown: lines 1-8 of 8
next: none, this is the end of the document
outline: blocks 0-3 of 4 (index type lines digest)
0 heading 1-1 sha256:74ab120daea7aff85cb0ee6ffdf510d8dbd8f5a9c90540b7db11a21d853a0c35
1 paragraph 3-3 sha256:a94e0eef52db7d5c2ef7cd7727deb81a80a3b541fb1590319c491f60db56c69c
2 list 5-6 sha256:0ecc89c398040c4c65e7f53fa449a24238fd6c11ac7244832456e17566f35887
3 decision 8-8 sha256:f6c5fb0ab3e78d78354be3b8b52e24781b5c325c412e7ab2fc1d768b8acfb76b
text:
# Launch plan

Ship the rocket.

- fuel
- crew

<Decision id="d1" />
`},
		{"offset, column and limit", ReadPlanArgs{Offset: 3, Column: 6, Limit: 2}, `document: Launch plan
url: /documents/acme/rocket/launch-plan
revision: 7
size: 69 bytes, 8 lines, 4 blocks
shown: lines 3-4 of 8, line 3 from column 6
next: read_plan {"offset":5,"limit":2}
stopped: after 2 lines, the limit asked for
outline: blocks 1-1 of 4 (index type lines digest)
1 paragraph 3-3 sha256:a94e0eef52db7d5c2ef7cd7727deb81a80a3b541fb1590319c491f60db56c69c
text:
the rocket.

`},
		{"blank lines only", ReadPlanArgs{Offset: 7, Limit: 1}, `document: Launch plan
url: /documents/acme/rocket/launch-plan
revision: 7
size: 69 bytes, 8 lines, 4 blocks
shown: line 7 of 8
next: read_plan {"offset":8,"limit":1}
stopped: after 1 line, the limit asked for
outline: no blocks in these lines, 4 in all
text:

`},
		{"last line", ReadPlanArgs{Offset: 8}, `document: Launch plan
url: /documents/acme/rocket/launch-plan
revision: 7
size: 69 bytes, 8 lines, 4 blocks
shown: line 8 of 8
next: none, this is the end of the document
outline: blocks 3-3 of 4 (index type lines digest)
3 decision 8-8 sha256:f6c5fb0ab3e78d78354be3b8b52e24781b5c325c412e7ab2fc1d768b8acfb76b
text:
<Decision id="d1" />
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := ReadPlan(smallView, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := page.Text(); got != tt.want {
				t.Errorf("ReadPlan(%+v):\n%s\nwant\n%s", tt.args, got, tt.want)
			}
		})
	}
}

func TestReadPlanEmpty(t *testing.T) {
	page, err := ReadPlan(PlanView{Title: "New", URL: "/d", Revision: 0}, ReadPlanArgs{})
	if err != nil {
		t.Fatal(err)
	}
	want := "document: New\nurl: /d\nrevision: 0\nsize: 0 bytes, 0 lines, 0 blocks\nshown: nothing, the plan is empty\n" +
		"next: none, this is the end of the document\noutline: no blocks in these lines, 0 in all\ntext:\n"
	if got := page.Text(); got != want {
		t.Errorf("empty plan:\n%q\nwant\n%q", got, want)
	}
}

func TestReadPlanArgumentErrors(t *testing.T) {
	tests := []struct {
		source string
		args   ReadPlanArgs
		want   string
	}{
		{smallPlan, ReadPlanArgs{Offset: -1}, "offset is a 1-based line number; -1 is not one."},
		{smallPlan, ReadPlanArgs{Limit: -5}, "limit is a number of lines, at least 1; -5 is not one."},
		{smallPlan, ReadPlanArgs{Column: -2}, "column is a 1-based character in line offset; -2 is not one."},
		{smallPlan, ReadPlanArgs{Offset: 9}, "offset 9 is past the end: the plan has 8 lines."},
		{smallPlan, ReadPlanArgs{Offset: 1, Column: 14}, "column 14 is past the end of line 1, which has 13 characters."},
		{smallPlan, ReadPlanArgs{Offset: 2, Column: 2}, "column 2 is past the end of line 2, which has 0 characters."},
		{"", ReadPlanArgs{Offset: 2}, "The plan is empty; call read_plan without offset or column."},
	}
	for _, tt := range tests {
		_, err := ReadPlan(PlanView{Source: tt.source}, tt.args)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Message != tt.want {
			t.Errorf("ReadPlan(%+v) = %v, want %s %q", tt.args, err, CodeInvalidArgument, tt.want)
		}
	}
	// The last column of a line is still valid; so is column 1 of an empty line.
	for _, args := range []ReadPlanArgs{{Offset: 1, Column: 13}, {Offset: 2, Column: 1}} {
		if _, err := ReadPlan(PlanView{Source: smallPlan}, args); err != nil {
			t.Errorf("ReadPlan(%+v) = %v", args, err)
		}
	}
}

func TestParseReadPlanArgs(t *testing.T) {
	for input, want := range map[string]ReadPlanArgs{
		``: {}, `{}`: {}, `{"offset":3,"limit":10,"column":2}`: {Offset: 3, Limit: 10, Column: 2},
	} {
		got, err := ParseReadPlanArgs([]byte(input))
		if err != nil || got != want {
			t.Errorf("ParseReadPlanArgs(%s) = %+v, %v; want %+v", input, got, err, want)
		}
	}
	for _, input := range []string{`{"ofset":3}`, `{"offset":"3"}`, `{"offset":1.5}`, `{} {}`, `[]`} {
		var e *Error
		if _, err := ParseReadPlanArgs([]byte(input)); !errors.As(err, &e) || e.Code != CodeInvalidArgument {
			t.Errorf("ParseReadPlanArgs(%s) = %v, want %s", input, err, CodeInvalidArgument)
		}
	}
}

// TestReadPlanLongLine cuts a line too long for one result and continues
// it by column, and starts a new result rather than cutting a line that fits
// one of its own.
func TestReadPlanLongLine(t *testing.T) {
	long := strings.Repeat("é", 12000) // 2 bytes each: 24,000 bytes, two results' worth
	source := "short\n" + long + "\nafter\n"
	view := PlanView{Title: "t", URL: "/u", Source: source}

	first, _ := ReadPlan(view, ReadPlanArgs{})
	if first.Source != "short\n" || *first.Next != (ReadPlanArgs{Offset: 2}) || first.Stopped != stoppedByBudget {
		t.Fatalf("first page: source %q, next %+v, stopped %q; want the short line alone", first.Source, first.Next, first.Stopped)
	}
	second, _ := ReadPlan(view, *first.Next)
	cut := utf8.RuneCountInString(second.Source)
	if !second.Cut || second.LastColumn != cut || *second.Next != (ReadPlanArgs{Offset: 2, Column: cut + 1}) {
		t.Fatalf("second page: cut %v, last column %d, next %+v; want it cut after column %d", second.Cut, second.LastColumn, second.Next, cut)
	}
	text := second.Text()
	wantHeader := fmt.Sprintf("shown: line 2 of 3, up to column %d; the line continues in the next result\nnext: read_plan {\"offset\":2,\"column\":%d}\nstopped: one result holds at most 16000 bytes\n", cut, cut+1)
	if !strings.Contains(text, wantHeader) {
		t.Errorf("second page's header:\n%s\nwant it to contain\n%s", text[:strings.Index(text, "text:\n")], wantHeader)
	}
	if len(text) > ReadBudget || len(text) < ReadBudget-variableReserve {
		t.Errorf("second page is %d bytes; a cut page fills the budget but for the reserve of the header", len(text))
	}
	third, _ := ReadPlan(view, *second.Next)
	if !strings.Contains(third.Text(), fmt.Sprintf("shown: lines 2-3 of 3, line 2 from column %d\n", cut+1)) {
		t.Errorf("third page's header:\n%s", third.Text()[:300])
	}
	if first.Source+second.Source+third.Source != source {
		t.Error("the three pages do not make the plan")
	}
}

// TestReadPlanPagesEveryCharacterOnce follows next: from every kind of start
// through random plans, a 1 MB one with very long lines among them, and
// checks each result's size and that the pages make the plan again exactly.
func TestReadPlanPagesEveryCharacterOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var sources []string
	for i := 0; i < 40; i++ {
		sources = append(sources, randomText(r, 1+r.IntN(200), 1+r.IntN(3000)))
	}
	sources = append(sources, randomText(r, 300, 40000)) // about 1 MB: 40,000-character lines and short ones
	sources = append(sources, largePlan(MaxSourceBytes))
	sources = append(sources, strings.Repeat("🚀", 10000), "x", "\n", "\n\n\n")
	if testing.Short() {
		sources = sources[:10]
	}

	for i, source := range sources {
		view := PlanView{Title: strings.Repeat("Title\n", 60), URL: "/documents/o/r/s", Revision: int64(i), Source: source}
		ls, blocks := splitLines(source), Blocks(source)
		if i%2 == 1 {
			view.Blocks = blocks // as a room passes them; the even ones parse on every page
		}
		starts := []ReadPlanArgs{{}, {Limit: 1 + r.IntN(5)}}
		if len(source) > MaxSourceBytes/2 {
			starts = starts[:1] // keep the big ones to one pass
			view.Blocks = blocks
		} else if ls.count() > 0 {
			starts = append(starts, ReadPlanArgs{Offset: 1 + r.IntN(ls.count())})
		}
		for _, args := range starts {
			from, _ := readStart(ls, args)
			var got strings.Builder
			pages := 0
			for next := &args; next != nil; pages++ {
				p, err := ReadPlan(view, *next)
				if err != nil {
					t.Fatalf("source %d, ReadPlan(%+v): %v", i, *next, err)
				}
				checkPage(t, p, ls, blocks, *next)
				got.WriteString(p.Source)
				next = p.Next
			}
			if got.String() != source[from:] {
				t.Fatalf("source %d (%d bytes) from %+v: the pages make %d bytes, not the %d of the plan", i, len(source), starts, got.Len(), len(source[from:]))
			}
			if pages > len(source)/(ReadBudget/4)+ls.count()+2 {
				t.Errorf("source %d took %d pages", i, pages)
			}
		}
	}
}

// checkPage checks one result against the rules every result keeps.
func checkPage(t *testing.T, p PlanPage, ls lines, blocks []Block, args ReadPlanArgs) {
	t.Helper()
	text := p.Text()
	if len(text) > ReadBudget {
		t.Fatalf("ReadPlan(%+v) is %d bytes, over %d", args, len(text), ReadBudget)
	}
	if !strings.HasSuffix(text, "\ntext:\n"+p.Source) {
		t.Fatalf("ReadPlan(%+v) does not end with its source", args)
	}
	if !utf8.ValidString(p.Source) { // every test plan is valid UTF-8
		t.Fatalf("ReadPlan(%+v) splits a character", args)
	}
	if ls.count() > 0 && p.Source == "" {
		t.Fatalf("ReadPlan(%+v) made no progress", args)
	}
	// The outline is exactly the blocks the shown lines overlap.
	var want []int
	for _, b := range blocks {
		if b.StartLine <= p.LastLine && b.EndLine >= p.FirstLine {
			want = append(want, b.Index)
		}
	}
	var got []int
	for _, b := range p.Outline {
		got = append(got, b.Index)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ReadPlan(%+v) outlines blocks %v, want %v", args, got, want)
	}
	if n := strings.Count(text[:len(text)-len(p.Source)], "\n"); n != 8+len(p.Outline)+btoi(p.Stopped != "") {
		t.Fatalf("ReadPlan(%+v) header has %d lines:\n%s", args, n, text[:len(text)-len(p.Source)])
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// randomText is lines of random length mixing ASCII, 2-, 3- and 4-byte
// characters and Markdown, some up to maxLine characters long.
func randomText(r *rand.Rand, lines, maxLine int) string {
	alphabet := []rune("abc xyz#-*>`|é漢🚀\t")
	var b strings.Builder
	for i := 0; i < lines; i++ {
		n := r.IntN(80)
		if r.IntN(8) == 0 {
			n = r.IntN(maxLine + 1)
		}
		if r.IntN(5) == 0 {
			n = 0
		}
		for j := 0; j < n; j++ {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		if i < lines-1 || r.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func TestReadPlanHeaderValuesStayOnOneLine(t *testing.T) {
	page, err := ReadPlan(PlanView{Title: "a\nb\tc" + strings.Repeat("x", 500), URL: "/u\r\n", Source: "x\n"}, ReadPlanArgs{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a b c" + strings.Repeat("x", 194) + "…"; page.Document != want {
		t.Errorf("document = %q, want %q", page.Document, want)
	}
	if page.URL != "/u  " {
		t.Errorf("url = %q", page.URL)
	}
}

// BenchmarkReadPlan is one read_plan call, a page from the middle of a plan
// of MaxSourceBytes.
func BenchmarkReadPlan(b *testing.B) {
	view := PlanView{Title: "Bench", URL: "/documents/o/r/bench", Source: largePlan(MaxSourceBytes)}
	args := ReadPlanArgs{Offset: splitLines(view.Source).count() / 2}
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadPlan(view, args); err != nil {
				b.Fatal(err)
			}
		}
	})
	view.Blocks = Blocks(view.Source)
	b.Run("kept-blocks", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadPlan(view, args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestNewCurrentPlan(t *testing.T) {
	got := mustJSON(NewCurrentPlan(PlanView{Title: "T", URL: "/u", Revision: 2, Source: "# A\n"}))
	want := `{"document":"T","url":"/u","revision":2,"bytes":4,"source":"# A\n","blocks":[{"index":0,"type":"heading","startLine":1,"endLine":1,"digest":"` + Digest("# A") + `"}]}`
	if got != want {
		t.Errorf("small plan\n got %s\nwant %s", got, want)
	}
	if got, want := mustJSON(NewCurrentPlan(PlanView{Title: "T", URL: "/u"})), `{"document":"T","url":"/u","revision":0,"bytes":0,"source":"","blocks":[]}`; got != want {
		t.Errorf("empty plan\n got %s\nwant %s", got, want)
	}

	// The limit is on the whole JSON view: find the longest source that fits.
	fits := 0
	for n := 7000; n < 8000; n++ {
		view := NewCurrentPlan(PlanView{Title: "T", URL: "/u", Source: strings.Repeat("x", n)})
		if view.PlanContent == nil {
			break
		}
		if len(mustJSON(view)) > MaxCurrentPlanBytes {
			t.Fatalf("a %d-byte source gives %d bytes of JSON", n, len(mustJSON(view)))
		}
		fits = n
	}
	over := mustJSON(NewCurrentPlan(PlanView{Title: "T", URL: "/u", Source: strings.Repeat("x", fits+1)}))
	wantOver := fmt.Sprintf(`{"document":"T","url":"/u","revision":0,"bytes":%d,"source_omitted":"The plan is too long to include here (over 8000 bytes as JSON); read it with read_plan."}`, fits+1)
	if fits == 0 || over != wantOver {
		t.Errorf("over the limit (%d bytes)\n got %s\nwant %s", fits+1, over, wantOver)
	}
}

// TestReadPlanNextNeverPointsPastALine follows next: through a line of
// every length around what one result holds: a piece cut at the very end
// of the line would leave next: naming the line break, which read_plan
// refuses, so the Planner could not page on.
func TestReadPlanNextNeverPointsPastALine(t *testing.T) {
	view := PlanView{Title: "t", URL: "/u"}
	for n := ReadBudget - variableReserve - 300; n <= ReadBudget; n++ {
		view.Source = "# A\n" + strings.Repeat("x", n) + "\nafter\n"
		var got strings.Builder
		pages := 0
		for next := (&ReadPlanArgs{}); next != nil; pages++ {
			p, err := ReadPlan(view, *next)
			if err != nil {
				t.Fatalf("a line of %d bytes: ReadPlan(%+v): %v", n, *next, err)
			}
			if p.Next != nil && p.Next.Offset == 2 && p.Next.Column > n {
				t.Fatalf("a line of %d bytes: next: %+v points past its end", n, *p.Next)
			}
			got.WriteString(p.Source)
			next = p.Next
		}
		if got.String() != view.Source || pages > 4 {
			t.Fatalf("a line of %d bytes: %d pages make %d bytes of %d", n, pages, got.Len(), len(view.Source))
		}
	}
}

// TestReadPlanReader: a page read through another tool names that tool and
// the document in its next: line, and still fits the budget.
func TestReadPlanReader(t *testing.T) {
	long := strings.Repeat("é", 12000)
	view := PlanView{Title: "t", URL: "/u", Source: "short\n" + long + "\nafter\n",
		Reader: Reader{Tool: "read_document", ID: "2b0c5d1e-0000-5000-8000-000000000000"}}
	first, _ := ReadPlan(view, ReadPlanArgs{})
	second, _ := ReadPlan(view, *first.Next)
	text := second.Text()
	want := fmt.Sprintf("next: read_document {\"id\":\"2b0c5d1e-0000-5000-8000-000000000000\",\"offset\":2,\"column\":%d}\n", second.LastColumn+1)
	if !strings.Contains(text, want) {
		t.Errorf("second page's header:\n%s\nwant it to contain\n%s", text[:strings.Index(text, "text:\n")], want)
	}
	if len(text) > ReadBudget {
		t.Errorf("second page is %d bytes, over the budget", len(text))
	}
	if first.Text() == "" || !strings.Contains(first.Text(), "next: read_document {\"id\":\"2b0c5d1e-0000-5000-8000-000000000000\",\"offset\":2}\n") {
		t.Errorf("first page:\n%s", first.Text())
	}
}
