package room

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/textrule"
)

// ReadBudget is the most UTF-8 bytes one read_plan result holds, header and
// outline included: a harness may keep only the head and tail of a result
// over 20 KiB, so a result stays well under that.
const ReadBudget = 16000

// PlanView is what the host tools see of a document.
type PlanView struct {
	Title    string
	URL      string
	Revision int64
	Source   string

	// Blocks, when not nil, must be Blocks(Source). A room keeps them per
	// revision, so that paging through a large plan does not parse it again
	// for every page; nil makes ReadPlan parse it.
	Blocks []Block

	// Reader is the call a page's next: line names; the zero value is
	// read_plan's.
	Reader Reader

	// Threads are the open and accepted comment threads, which the page
	// that starts the plan lists after the outline (commentsSection).
	Threads []Thread
}

// Reader names a tool that pages through a plan as read_plan does, with
// the document it reads: MCP's read_document takes the document's id as
// well as read_plan's arguments.
type Reader struct {
	Tool string // read_plan when empty
	ID   string // the document's ID, sent as "id" before the paging arguments
	// Args are JSON members sent after the ID and before the paging
	// arguments, each with its comma: `"version":12,` for read_version.
	Args string
}

// prefix is the start of the continuing call, up to the paging arguments.
func (r Reader) prefix() string {
	if r.Tool == "" {
		return ToolReadPlan + ` {`
	}
	s := r.Tool + ` {`
	if r.ID != "" {
		s += `"id":` + strconv.Quote(oneLine(r.ID)) + `,`
	}
	return s + r.Args
}

// extra is how much longer its next: line is than read_plan's.
func (r Reader) extra() int { return len(r.prefix()) - len(Reader{}.prefix()) }

// ReadPlanArgs are read_plan's arguments. Zero means absent.
//
//	{ "offset"?: 1-based line, "limit"?: most lines, "column"?: 1-based character in line offset }
type ReadPlanArgs struct {
	Offset int `json:"offset,omitempty"`
	Limit  int `json:"limit,omitempty"`
	Column int `json:"column,omitempty"`
}

// ParseReadPlanArgs decodes read_plan's input strictly: an unknown field is
// refused rather than ignored, so a misspelt "ofset" is not a silent read of
// line 1.
func ParseReadPlanArgs(input []byte) (ReadPlanArgs, error) {
	var args ReadPlanArgs
	if len(bytes.TrimSpace(input)) == 0 {
		return args, nil
	}
	if err := decodeStrict(input, &args); err != nil {
		return args, errorf(CodeInvalidArgument, "read_plan takes {offset?, limit?, column?}, whole numbers: %v.", err)
	}
	return args, nil
}

// A PlanPage is one read_plan result as data: the structured view the host
// tool returns. Text renders what the model reads.
//
// The shown text, Source, is the document's bytes from line FirstLine at
// character FirstColumn to line LastLine, which is shown whole unless Cut,
// and then up to character LastColumn.
type PlanPage struct {
	Document string `json:"document"`
	URL      string `json:"url"`
	Revision int64  `json:"revision"`
	Bytes    int    `json:"bytes"` // the whole document's size
	Lines    int    `json:"lines"`
	Blocks   int    `json:"blocks"`

	FirstLine   int  `json:"firstLine"`
	FirstColumn int  `json:"firstColumn"`
	LastLine    int  `json:"lastLine"`
	LastColumn  int  `json:"lastColumn,omitempty"`
	Cut         bool `json:"cut,omitempty"`

	// Comments lists the open and accepted comment threads, on the page
	// that starts at line 1 only.
	Comments string `json:"comments,omitempty"`

	Outline []Block       `json:"outline"`           // the blocks the shown lines overlap
	Source  string        `json:"source"`            // the shown part of the document, verbatim
	Next    *ReadPlanArgs `json:"next"`              // nil at the end of the document
	Stopped string        `json:"stopped,omitempty"` // why it ended before the document did

	reader Reader // the call next: names
}

// Why a page ends before the document does.
const (
	stoppedByLimit  = "limit"
	stoppedByBudget = "budget"
)

// ReadPlan is the read_plan host tool: a page of the plan's text. The pages
// that each Next names in turn, starting from any page, return every
// character of the rest of the document exactly once; a line is cut only
// when it does not fit in a result of its own, and never inside a UTF-8
// character. Columns count Unicode code points.
//
// The text (PlanPage.Text) for a plan that fits one result (digests
// shortened here; each is "sha256:" and 64 hex digits):
//
//	document: Launch plan
//	url: /documents/acme/rocket/launch-plan
//	revision: 7
//	size: 69 bytes, 8 lines, 4 blocks
//	shown: lines 1-8 of 8
//	next: none, this is the end of the document
//	outline: blocks 0-3 of 4 (index type lines digest)
//	0 heading 1-1 sha256:74ab120d…
//	1 paragraph 3-3 sha256:a94e0eef…
//	2 list 5-6 sha256:0ecc89c3…
//	3 decision 8-8 sha256:f6c5fb0a…
//	text:
//	# Launch plan
//
//	Ship the rocket.
//
//	- fuel
//	- crew
//
//	<Decision id="d1" />
//
// The outline lists the blocks the shown lines overlap, so paging through
// the plan shows every block with the page that holds its first line.
// Every line after "text:" is the document's own, verbatim. A page that
// stops early says why on a "stopped:" line after next:, and next: names the
// call that continues, with the same limit:
//
//	next: read_plan {"offset":120}
//	stopped: one result holds at most 16000 bytes
//
// A line too long for one result is shown in pieces:
//
//	shown: line 7 of 9, up to column 15210; the line continues in the next result
//	next: read_plan {"offset":7,"column":15211}
//
// and the next result says "shown: lines 7-9 of 9, line 7 from column 15211".
// A cut piece has no line break after it; a page that ends at the end of a
// line keeps that line's break.
func ReadPlan(view PlanView, args ReadPlanArgs) (PlanPage, error) {
	ls := splitLines(view.Source)
	blocks := view.Blocks
	if blocks == nil {
		blocks = Blocks(view.Source)
	}
	page := PlanPage{
		Document: oneLine(view.Title),
		URL:      oneLine(view.URL),
		Revision: view.Revision,
		Bytes:    len(view.Source),
		Lines:    ls.count(),
		Blocks:   len(blocks),
		Outline:  []Block{},
		reader:   view.Reader,
	}
	from, err := readStart(ls, args)
	if err != nil {
		return PlanPage{}, err
	}
	page.FirstLine, page.FirstColumn = args.Offset, args.Column
	if page.FirstLine == 0 {
		page.FirstLine = 1
	}
	if page.FirstColumn == 0 {
		page.FirstColumn = 1
	}
	if ls.count() == 0 {
		page.LastLine = 0
		return page, nil
	}

	// The header's fixed part is known; the lines that depend on where the
	// page ends are reserved at their longest.
	room := ReadBudget - len(page.header()) - variableReserve - view.Reader.extra()
	if page.FirstLine == 1 && page.FirstColumn == 1 && len(view.Threads) > 0 {
		page.Comments = commentsSection(view.Threads, maxCommentsBytes)
		room -= len(page.Comments)
	}

	next := len(blocks) // first block not yet in the outline
	for i, b := range blocks {
		if b.EndLine >= page.FirstLine {
			next = i
			break
		}
	}
	to, n := from, page.FirstLine
	for shown := 0; n <= ls.count(); n++ {
		if args.Limit > 0 && shown == args.Limit {
			page.Stopped = stoppedByLimit
			break
		}
		var entries []Block
		cost := 0
		for ; next < len(blocks) && blocks[next].StartLine <= n; next++ {
			entries = append(entries, blocks[next])
			cost += len(outlineEntry(blocks[next]))
		}
		_, _, lineNext := ls.bounds(n)
		if cost+lineNext-to <= room {
			page.Outline = append(page.Outline, entries...)
			room -= cost + lineNext - to
			to = lineNext
			shown++
			continue
		}
		if shown > 0 {
			page.Stopped = stoppedByBudget // the line fits a result of its own: start the next one with it
			break
		}
		// A line too long for any result: show as much as fits.
		page.Outline = append(page.Outline, entries...)
		to = cutAt(view.Source, to, to+room-cost)
		page.Cut = true
		page.LastLine = n
		page.LastColumn = columnAt(ls, n, to) - 1
		page.Stopped = stoppedByBudget
		page.Source = view.Source[from:to]
		page.Next = &ReadPlanArgs{Offset: n, Column: page.LastColumn + 1, Limit: args.Limit}
		return page, nil
	}
	page.LastLine = n - 1
	page.Source = view.Source[from:to]
	if n <= ls.count() {
		page.Next = &ReadPlanArgs{Offset: n, Limit: args.Limit}
	}
	return page, nil
}

// readStart checks the arguments and finds the byte where the page starts.
func readStart(ls lines, args ReadPlanArgs) (int, error) {
	switch {
	case args.Offset < 0:
		return 0, errorf(CodeInvalidArgument, "offset is a 1-based line number; %d is not one.", args.Offset)
	case args.Limit < 0:
		return 0, errorf(CodeInvalidArgument, "limit is a number of lines, at least 1; %d is not one.", args.Limit)
	case args.Column < 0:
		return 0, errorf(CodeInvalidArgument, "column is a 1-based character in line offset; %d is not one.", args.Column)
	}
	line, column := max(args.Offset, 1), max(args.Column, 1)
	if ls.count() == 0 {
		if line != 1 || column != 1 {
			return 0, errorf(CodeInvalidArgument, "The plan is empty; call read_plan without offset or column.")
		}
		return 0, nil
	}
	if line > ls.count() {
		return 0, errorf(CodeInvalidArgument, "offset %d is past the end: the plan has %d lines.", line, ls.count())
	}
	start, end, _ := ls.bounds(line)
	at := start
	for c := 1; c < column && at < end; c++ {
		_, size := utf8.DecodeRuneInString(ls.src[at:end])
		at += size
	}
	// Column 1 of an empty line is its line break; any other column must
	// name a character.
	if column > 1 && at == end {
		return 0, errorf(CodeInvalidArgument, "column %d is past the end of line %d, which has %d characters.",
			column, line, utf8.RuneCountInString(ls.src[start:end]))
	}
	return at, nil
}

// cutAt is the end of the longest piece of the line from start that ends at
// or before limit and does not split a character. It takes at least one
// character, and never the whole line: a piece that ends where the line does
// would leave a next call pointing at nothing but the line break.
func cutAt(src string, start, limit int) int {
	lineEnd := start + strings.IndexByte(src[start:], '\n')
	if lineEnd < start {
		lineEnd = len(src)
	}
	end := start
	for end < lineEnd {
		_, size := utf8.DecodeRuneInString(src[end:lineEnd])
		if end+size > limit && end > start {
			break
		}
		end += size
	}
	if end == lineEnd && end > start {
		_, size := utf8.DecodeLastRuneInString(src[start:end])
		end -= size
	}
	if end == start { // a one-character line that did not fit: only possible with a tiny budget
		_, size := utf8.DecodeRuneInString(src[start:lineEnd])
		end += size
	}
	return end
}

// columnAt is the 1-based character at byte offset in line n.
func columnAt(ls lines, n, offset int) int {
	start, _, _ := ls.bounds(n)
	return utf8.RuneCountInString(ls.src[start:offset]) + 1
}

// Text is the page as the model reads it; see ReadPlan for the format.
func (p PlanPage) Text() string {
	var b strings.Builder
	b.Grow(len(p.Source) + 1024)
	b.WriteString(p.header())
	b.WriteString(p.variable())
	for _, blk := range p.Outline {
		b.WriteString(outlineEntry(blk))
	}
	b.WriteString(p.Comments)
	b.WriteString("text:\n")
	b.WriteString(p.Source)
	return b.String()
}

// header is the part of the page that does not depend on where it ends.
func (p PlanPage) header() string {
	return fmt.Sprintf("document: %s\nurl: %s\nrevision: %d\nsize: %s, %s, %s\n",
		p.Document, p.URL, p.Revision, nounCount(p.Bytes, "byte"), nounCount(p.Lines, "line"), nounCount(p.Blocks, "block"))
}

// variable is the shown:, next:, stopped: and outline: lines.
func (p PlanPage) variable() string {
	var b strings.Builder
	b.WriteString("shown: ")
	switch {
	case p.Lines == 0:
		b.WriteString("nothing, the plan is empty")
	case p.FirstLine == p.LastLine:
		fmt.Fprintf(&b, "line %d of %d", p.FirstLine, p.Lines)
	default:
		fmt.Fprintf(&b, "lines %d-%d of %d", p.FirstLine, p.LastLine, p.Lines)
	}
	if p.FirstColumn > 1 {
		fmt.Fprintf(&b, ", line %d from column %d", p.FirstLine, p.FirstColumn)
	}
	if p.Cut {
		fmt.Fprintf(&b, ", up to column %d; the line continues in the next result", p.LastColumn)
	}
	b.WriteString("\nnext: ")
	if p.Next == nil {
		b.WriteString("none, this is the end of the document\n")
	} else {
		b.WriteString(p.reader.prefix())
		b.WriteString(p.Next.call())
		b.WriteString("\n")
	}
	switch p.Stopped {
	case stoppedByLimit:
		fmt.Fprintf(&b, "stopped: after %s, the limit asked for\n", nounCount(p.Next.Limit, "line"))
	case stoppedByBudget:
		fmt.Fprintf(&b, "stopped: one result holds at most %d bytes\n", ReadBudget)
	}
	switch n := len(p.Outline); n {
	case 0:
		fmt.Fprintf(&b, "outline: no blocks in these lines, %d in all\n", p.Blocks)
	default:
		fmt.Fprintf(&b, "outline: blocks %d-%d of %d (index type lines digest)\n",
			p.Outline[0].Index, p.Outline[n-1].Index, p.Blocks)
	}
	return b.String()
}

// variableReserve bounds variable()'s length, and "text:\n" with it, for any
// document: it is the length with every number at its longest.
var variableReserve = func() int {
	const big = 1 << 40
	worst := PlanPage{Lines: big, Blocks: big, FirstLine: big - 1, FirstColumn: big, LastLine: big, LastColumn: big,
		Cut: true, Stopped: stoppedByLimit, Next: &ReadPlanArgs{Offset: big, Limit: big, Column: big},
		Outline: []Block{{Index: big}, {Index: big}}}
	limit := len(worst.variable())
	worst.Stopped = stoppedByBudget
	return max(limit, len(worst.variable())) + len("text:\n")
}()

// nounCount is n and the noun, in the plural unless n is 1.
func nounCount(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func outlineEntry(b Block) string {
	return strconv.Itoa(b.Index) + " " + b.Type + " " + strconv.Itoa(b.StartLine) + "-" + strconv.Itoa(b.EndLine) + " " + b.Digest + "\n"
}

// call is the paging arguments of the call that continues, after its
// opening brace and any arguments of its own.
func (a ReadPlanArgs) call() string {
	s := `"offset":` + strconv.Itoa(a.Offset)
	if a.Limit > 0 {
		s += `,"limit":` + strconv.Itoa(a.Limit)
	}
	if a.Column > 1 {
		s += `,"column":` + strconv.Itoa(a.Column)
	}
	return s + "}"
}

// oneLine keeps a header value on its line and within a few hundred bytes, so
// no title can push the text out of a result.
func oneLine(s string) string {
	const most = 200 // characters
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > most {
		s = string([]rune(s)[:most-1]) + "…"
	}
	return s
}

// truncUTF8 is s cut to at most n bytes, between characters.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// decodeStrict decodes one JSON value into v, refusing unknown fields and
// anything after the value, and text that is not UTF-8 (textrule.JSON): a
// host tool's input is JSON inside the agent link's frame, whose own check
// cannot see into it.
func decodeStrict(input []byte, v any) error {
	if err := textrule.JSON(input); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("unexpected data after the arguments")
	}
	return nil
}

// MaxCurrentPlanBytes is the most bytes of JSON a current_plan holds with
// its source and blocks; a larger plan is named without them.
const MaxCurrentPlanBytes = 8000

// CurrentPlan is the current_plan the ask and open_decisions results carry:
// JSON, unlike read_plan, with the source and outline while they fit
// MaxCurrentPlanBytes, and otherwise source_omitted saying why and what to
// read instead.
//
//	{ "document": "", "url": "", "revision": 7, "bytes": 69, "source": "", "blocks": [Block...] }
//	{ "document": "", "url": "", "revision": 7, "bytes": 91234, "source_omitted": "..." }
type CurrentPlan struct {
	Document string `json:"document"`
	URL      string `json:"url"`
	Revision int64  `json:"revision"`
	Bytes    int    `json:"bytes"`
	*PlanContent
	SourceOmitted string `json:"source_omitted,omitempty"`
}

// PlanContent is a plan's text and outline; nil in CurrentPlan leaves both out.
type PlanContent struct {
	Source string  `json:"source"`
	Blocks []Block `json:"blocks"`
}

// NewCurrentPlan makes the current_plan view of a plan.
func NewCurrentPlan(view PlanView) CurrentPlan {
	blocks := view.Blocks
	if blocks == nil {
		blocks = Blocks(view.Source)
	}
	c := CurrentPlan{Document: view.Title, URL: view.URL, Revision: view.Revision, Bytes: len(view.Source),
		PlanContent: &PlanContent{Source: view.Source, Blocks: append([]Block{}, blocks...)}}
	if full, err := json.Marshal(c); err == nil && len(full) <= MaxCurrentPlanBytes {
		return c
	}
	c.PlanContent = nil
	c.SourceOmitted = fmt.Sprintf("The plan is too long to include here (over %d bytes as JSON); read it with read_plan.", MaxCurrentPlanBytes)
	return c
}

// maxCommentsBytes bounds the comments section of a read_plan page.
const maxCommentsBytes = 4000

// commentsSection is read_plan's list of open and accepted threads:
//
//	comments: 1 open, 1 accepted (id status lines anchor; quote; notes)
//	c1a2 open lines 3-3 anchored
//	  quote: Use Postgres for everything.
//	  @ada: Why not SQLite?
//	c9f0 accepted lines 7-7 changed, revised by the Planner
//	  quote: Ship in May.
//	  @bob: Say June.
//
// Quotes and notes are shown on one line and cut at 200 bytes; threads past
// budget are counted, not shown.
func commentsSection(threads []Thread, budget int) string {
	open, accepted := 0, 0
	for _, t := range threads {
		switch t.Status {
		case ThreadOpen:
			open++
		case ThreadAccepted:
			accepted++
		}
	}
	if open+accepted == 0 {
		return ""
	}
	head := fmt.Sprintf("comments: %d open, %d accepted (id status lines anchor; quote; notes)\n", open, accepted)
	var b strings.Builder
	b.WriteString(head)
	left := 0
	const more = "  … %d more threads not shown\n"
	for i, t := range threads {
		if t.Status != ThreadOpen && t.Status != ThreadAccepted {
			continue
		}
		var e strings.Builder
		lines := "orphaned"
		if t.Passage.State != AnchorOrphaned {
			lines = fmt.Sprintf("lines %d-%d %s", t.Passage.StartLine, t.Passage.EndLine, t.Passage.State)
		}
		fmt.Fprintf(&e, "%s %s %s", t.ID, t.Status, lines)
		if t.Status == ThreadAccepted && t.Result != nil {
			switch t.Result.State {
			case ResultRevised:
				e.WriteString(", revised by the Planner")
			case ResultRevising:
				e.WriteString(", being revised in this turn")
			case ResultNone:
				e.WriteString(", the Planner changed nothing")
			case ResultNoPlan:
				e.WriteString(", not revised: no Planner was attached")
			}
		}
		e.WriteString("\n  quote: " + truncUTF8(oneLine(t.Passage.Quote), 200) + "\n")
		for _, n := range t.Notes {
			e.WriteString("  @" + oneLine(n.Author) + ": " + truncUTF8(oneLine(n.Text), 200) + "\n")
		}
		if b.Len()+e.Len()+len(more)+8 > budget {
			for _, rest := range threads[i:] {
				if rest.Status == ThreadOpen || rest.Status == ThreadAccepted {
					left++
				}
			}
			break
		}
		b.WriteString(e.String())
	}
	if left > 0 {
		fmt.Fprintf(&b, more, left)
	}
	return b.String()
}
