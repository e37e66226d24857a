package room

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxSourceBytes is the most UTF-8 bytes a plan's source may hold. An edit
// whose result is longer is refused with document-too-large.
const MaxSourceBytes = 256 * 1024

// Block types. They are the words the Planner reads in read_plan's outline and
// edit_plan's results, so they are part of the host tools' contract.
const (
	BlockHeading       = "heading"
	BlockParagraph     = "paragraph"
	BlockList          = "list"
	BlockQuote         = "blockquote"
	BlockCode          = "code"
	BlockThematicBreak = "thematic_break"
	BlockHTML          = "html"
	BlockTable         = "table"
	BlockDefinition    = "definition" // a link reference definition: [label]: /url
	BlockComponent     = "component"  // an MDX component: <Callout>, <Tabs>, ...
	BlockDecision      = "decision"   // a reserved <Decision id="..." /> or <Comment id="..." /> line
)

// A Block is one top-level block of a plan, as a CommonMark parser splits the
// source. Its source is its lines, StartLine to EndLine, joined by "\n" and
// without a final line break; Digest is "sha256:" and the lowercase hex
// SHA-256 of that source, so a block keeps its digest wherever it moves.
// Blank lines between blocks belong to no block.
type Block struct {
	Index     int    `json:"index"`
	Type      string `json:"type"`
	StartLine int    `json:"startLine"` // 1-based
	EndLine   int    `json:"endLine"`   // 1-based, inclusive
	Digest    string `json:"digest"`
}

// blockParser splits blocks only. Inline parsers are left out: Blocks never
// looks inside a block, and inline parsing is most of goldmark's time (a
// plan of MaxSourceBytes parses several times faster without it). Link
// reference definitions are cut out of paragraphs by linkRefs, in linear
// time, instead of goldmark's own transformer. It is safe for concurrent
// use: goldmark keeps parse state in a per-call context. Like the package's
// regular expressions it is made when first used, not at start-up.
var blockParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithParagraphTransformers(util.Prioritized(linkRefs{}, 100)),
		parser.WithParagraphTransformers(util.Prioritized(tableParagraphs{}, 200)),
	)
})

// Blocks splits source into its top-level blocks.
//
// goldmark gives every block node its start offset but no end (container
// nodes such as lists have no lines of their own, and a fenced code block's
// lines leave out its fences). Every non-blank line belongs to the top-level
// node that starts at or before it, so a block ends on the last non-blank line
// before the next block starts. That also gives fences, closing HTML lines and
// lazy continuation lines to the block they belong to.
//
// MDX components are then joined: CommonMark ends an HTML block at a blank
// line, so "<Callout>", its Markdown body and "</Callout>" arrive as separate
// blocks and are made one component block again.
//
// goldmark parses the source's outlineView, whose nesting is bounded
// (MaxOutlineDepth, MaxOutlineIndent), so the time it takes grows with the
// source's length and no faster. A text's outline is parsed once and kept
// (outlineCache): every reader of a revision gets the same outline, and
// the slice returned is the caller's own.
func Blocks(source string) []Block {
	return slices.Clone(outlineCache.get(source, parseBlocks))
}

// parseBlocks is Blocks without the cache.
func parseBlocks(source string) []Block {
	view := newOutlineView(source)
	return blocksOf(source, blockParser().Parse(text.NewReader(view.text)), view.sourceLine)
}

// blocksOf is the outline of source from doc, goldmark's tree of a text
// whose byte offsets lineAt turns into source lines.
func blocksOf(source string, doc ast.Node, lineAt func(offset int) int) []Block {
	ls := splitLines(source)
	var spans []span
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		pos := startOffset(n)
		if pos < 0 {
			continue // a node with no text of its own; its lines join the block before
		}
		line := lineAt(pos)
		if len(spans) > 0 && spans[len(spans)-1].start >= line {
			continue // starts on a line already claimed; never seen, but keep ranges disjoint
		}
		spans = append(spans, span{start: line, kind: n.Kind()})
	}
	for i := range spans {
		end := ls.count()
		if i+1 < len(spans) {
			end = spans[i+1].start - 1
		}
		for end > spans[i].start && isBlank(ls.line(end)) {
			end--
		}
		spans[i].end = end
	}
	spans = joinComponents(ls, spans)

	blocks := make([]Block, len(spans))
	for i, s := range spans {
		src := ls.span(s.start, s.end)
		blocks[i] = Block{
			Index:     i,
			Type:      blockType(s, src),
			StartLine: s.start,
			EndLine:   s.end,
			Digest:    Digest(src),
		}
	}
	return blocks
}

// Digest is a block digest: "sha256:" and the hex SHA-256 of the block's source.
func Digest(blockSource string) string {
	sum := sha256.Sum256([]byte(blockSource))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// BlockSource is the text of block b in source: its lines, without a final
// line break. A caller taking block after block of the same source finds
// its lines indexed once, not once per block.
func BlockSource(source string, b Block) string {
	ls := lastLines.Load()
	if ls == nil || ls.src != source { // the same string compares at once
		ls = &lines{}
		*ls = splitLines(source)
		lastLines.Store(ls)
	}
	return ls.span(b.StartLine, b.EndLine)
}

// lastLines is the line index BlockSource made last.
var lastLines atomic.Pointer[lines]

// span is a top-level block before it has an index and digest.
type span struct {
	start, end int // 1-based lines, inclusive
	kind       ast.NodeKind
	component  bool // joined from an MDX component's pieces
}

// startOffset is the byte offset where n starts, or -1.
func startOffset(n ast.Node) int {
	if p := n.Pos(); p >= 0 {
		return p
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if p := startOffset(c); p >= 0 {
			return p
		}
	}
	return -1
}

func blockType(s span, src string) string {
	if isDecisionMark(src) {
		return BlockDecision
	}
	if s.component || (!isCode(s.kind) && componentName(src) != "") {
		return BlockComponent
	}
	switch s.kind {
	case ast.KindHeading:
		return BlockHeading
	case ast.KindParagraph, ast.KindTextBlock:
		return BlockParagraph
	case ast.KindList:
		return BlockList
	case ast.KindBlockquote:
		return BlockQuote
	case ast.KindFencedCodeBlock, ast.KindCodeBlock:
		return BlockCode
	case ast.KindThematicBreak:
		return BlockThematicBreak
	case ast.KindHTMLBlock:
		return BlockHTML
	case ast.KindLinkReferenceDefinition:
		return BlockDefinition
	case east.KindTable:
		return BlockTable
	}
	return strings.ToLower(s.kind.String())
}

func isCode(k ast.NodeKind) bool {
	return k == ast.KindFencedCodeBlock || k == ast.KindCodeBlock
}

// joinComponents makes one block of an MDX component whose closing tag is in a
// later block. A component that is never closed stays as it was parsed.
func joinComponents(ls lines, spans []span) []span {
	closing := componentEnds(ls, spans)
	out := spans[:0:0]
	for i := 0; i < len(spans); i++ {
		s := spans[i]
		j := closing[i]
		if j < 0 {
			out = append(out, s) // no component, or never closed: leave the pieces as CommonMark split them
			continue
		}
		out = append(out, span{start: s.start, end: spans[j].end, kind: s.kind, component: true})
		i = j
	}
	return out
}

// componentEnds gives, for each span that opens an MDX component, the span
// whose closing tag closes it: the first where the component's opening tags,
// less its closing tags, from the opening span on come to zero or fewer. It
// is -1 for a component never closed and for every other span. A closing tag
// shown in a code sample closes nothing.
//
// Each span's tags are read once, and each component's spans are searched
// with a stack, so a plan of thousands of components left open costs time
// in proportion to its length, not to the square of its count.
func componentEnds(ls lines, spans []span) []int {
	type delta struct{ span, depth int }
	var byName map[string][]delta
	opens := make([]string, len(spans))
	ends := make([]int, len(spans))
	for k, s := range spans {
		ends[k] = -1
		if isCode(s.kind) {
			continue
		}
		src := ls.span(s.start, s.end)
		opens[k] = componentName(src)
		componentTags(src, func(name string, depth int) {
			if byName == nil {
				byName = map[string][]delta{}
			}
			list := byName[name]
			if n := len(list); n > 0 && list[n-1].span == k {
				list[n-1].depth += depth
			} else {
				byName[name] = append(list, delta{k, depth})
			}
		})
	}
	for name, list := range byName {
		// sum[t] is the depth of name after list[t-1]; closer[t] is the
		// first u > t whose sum is no more than sum[t], or -1.
		sum := make([]int, len(list)+1)
		for t, d := range list {
			sum[t+1] = sum[t] + d.depth
		}
		closer := make([]int, len(sum))
		var stack []int
		for t := len(sum) - 1; t >= 0; t-- {
			for len(stack) > 0 && sum[stack[len(stack)-1]] > sum[t] {
				stack = stack[:len(stack)-1]
			}
			closer[t] = -1
			if len(stack) > 0 {
				closer[t] = stack[len(stack)-1]
			}
			stack = append(stack, t)
		}
		for a, d := range list {
			switch {
			case opens[d.span] != name:
			case d.depth <= 0:
				ends[d.span] = d.span // opened and closed in its own span
			case closer[a] >= 0:
				ends[d.span] = list[closer[a]-1].span
			}
		}
	}
	return ends
}

// componentName is the name of the MDX component src opens with, such as
// "Callout", or "". MDX components are capitalised; HTML elements are not.
func componentName(src string) string {
	s := strings.TrimLeft(src, " \t")
	if len(s) < 2 || s[0] != '<' || s[1] < 'A' || s[1] > 'Z' {
		return ""
	}
	n := 2
	for n < len(s) && isNameByte(s[n]) {
		n++
	}
	return s[1:n]
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

// componentTags calls tag for each opening tag of an MDX component in src
// with depth 1, and each closing tag with -1; a self-closing tag counts
// nothing. A component's name is capitalised, as componentName reads it.
// A tag's attributes are skipped: attribute values in quotes or braces may
// hold '>' (and text that looks like a tag) without ending the tag.
func componentTags(src string, tag func(name string, depth int)) {
	for i := 0; i < len(src); i++ {
		if src[i] != '<' {
			continue
		}
		at := i + 1
		closing := at < len(src) && src[at] == '/'
		if closing {
			at++
		}
		if at >= len(src) || src[at] < 'A' || src[at] > 'Z' {
			continue
		}
		after := at + 1
		for after < len(src) && isNameByte(src[after]) {
			after++
		}
		end, selfClosing := tagEnd(src, after)
		switch {
		case closing:
			tag(src[at:after], -1)
		case !selfClosing:
			tag(src[at:after], 1)
		}
		i = end
	}
}

// tagEnd finds the '>' that ends a tag whose attributes start at i, and
// whether the tag closes itself with "/>". An unterminated tag ends at the end
// of src.
func tagEnd(src string, i int) (end int, selfClosing bool) {
	var quote byte
	braces := 0
	for ; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{':
			braces++
		case c == '}' && braces > 0:
			braces--
		case c == '>' && braces == 0:
			return i, strings.HasSuffix(strings.TrimRight(src[:i], " \t\n"), "/")
		}
	}
	return len(src), false
}

// A DecisionMark is a <Decision id="..." /> line: where a decision card sits
// in the plan.
type DecisionMark struct {
	ID   string `json:"id"`
	Line int    `json:"line"` // 1-based
}

// decisionMark matches a whole line the server wrote with InsertDecisionMarks.
var decisionMark = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[ \t]*<Decision[ \t]+id="([A-Za-z0-9][A-Za-z0-9._:-]{0,127})"[ \t]*/>[ \t]*$`)
})

// decisionTag finds any use of the reserved component, well-formed or not: in
// MDX a component may also sit inside a line of text.
var decisionTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<(?:Decision|Comment)(?:[\s/>]|$)`) })

var markID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`) })

func isDecisionMark(src string) bool {
	return !strings.Contains(src, "\n") && (decisionMark().MatchString(src) || commentMark().MatchString(src))
}

// Decisions lists the decision marks in source, in order.
func Decisions(source string) []DecisionMark {
	var marks []DecisionMark
	ls := splitLines(source)
	for n := 1; n <= ls.count(); n++ {
		if m := decisionMark().FindStringSubmatch(ls.line(n)); m != nil {
			marks = append(marks, DecisionMark{ID: m[1], Line: n})
		}
	}
	return marks
}

// CheckReserved refuses an edit by a person or the Planner that adds, removes,
// duplicates, reorders or alters a line holding the reserved <Decision>
// component; only the server writes those (InsertDecisionMarks). Every other
// line may change, so text may move around a card but the cards stay as the
// server wrote them. A <Decision in a code sample counts too: telling a sample
// from a card is not worth a way to forge one.
//
// Only the lines an edit touched are read: the lines before the first
// changed byte and after the last are the same on both sides, in the same
// order, so the reserved lines of the whole text are equal exactly when
// those of the changed lines are. A keystroke in a large plan costs two
// comparisons of memory, not a match per line.
func CheckReserved(before, after string) error {
	p := commonPrefix(before, after)
	s := commonSuffix(before[p:], after[p:])
	return checkReservedIn(before, after, editSpan{From: p, OldEnd: len(before) - s, NewEnd: len(after) - s})
}

// checkReservedIn is CheckReserved where the texts are known to be the
// same before span.From and after span.OldEnd (span.NewEnd in after): a
// push's change set says where it changed the text, and nothing is
// compared.
func checkReservedIn(before, after string, span editSpan) error {
	if err := checkPlanText(after, span); err != nil {
		return err
	}
	was, now := changedLines(before, after, span)
	if equalLines(reservedLines(was), reservedLines(now)) {
		return nil
	}
	// The words name lines by number and tell a duplicate from a new card,
	// which takes the whole text; only a refused edit pays for it.
	wasAll, nowAll := reservedLines(before), reservedLines(after)
	return &Error{Code: CodeReservedComponent, Message: describeReservedChange(wasAll, nowAll)}
}

// changedLines returns the whole lines of before and of after that span
// covers: from the start of the line holding its first byte to the end of
// the line holding its last (without its line break). What precedes and
// follows them is the same text on both sides.
func changedLines(before, after string, span editSpan) (string, string) {
	start := strings.LastIndexByte(before[:span.From], '\n') + 1
	end := func(text string, tail int) int {
		if nl := strings.IndexByte(text[tail:], '\n'); nl >= 0 {
			return tail + nl
		}
		return len(text)
	}
	return before[start:end(before, span.OldEnd)], after[start:end(after, span.NewEnd)]
}

type reservedLine struct {
	n    int // 1-based
	text string
}

func reservedLines(source string) []reservedLine {
	var out []reservedLine
	ls := splitLines(source)
	for n := 1; n <= ls.count(); n++ {
		if l := ls.line(n); decisionTag().MatchString(l) {
			out = append(out, reservedLine{n, l})
		}
	}
	return out
}

func equalLines(a, b []reservedLine) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].text != b[i].text {
			return false
		}
	}
	return true
}

// describeReservedChange says in plain words what an edit did to the
// decision cards' lines, naming the first line that differs.
func describeReservedChange(was, now []reservedLine) string {
	const advice = "Decision cards are placed by Chopin: leave every <Decision /> line exactly as it is and edit the text around it."
	added, removed := unmatched(now, was), unmatched(was, now)
	for _, l := range added {
		verb := "add"
		id := looseID(l.text)
		switch {
		case id != "" && hasID(removed, id):
			verb = "alter"
		case id != "" && hasID(was, id):
			verb = "duplicate"
		case len(removed) > 0:
			verb = "alter"
		}
		return fmt.Sprintf("This edit would %s a decision card at line %d (%s). %s", verb, l.n, strings.TrimSpace(l.text), advice)
	}
	for _, l := range removed {
		return fmt.Sprintf("This edit would remove the decision card on line %d (%s). %s", l.n, strings.TrimSpace(l.text), advice)
	}
	return "This edit would reorder the decision cards. " + advice
}

// unmatched is the lines of a whose text b does not have, counting repeats.
func unmatched(a, b []reservedLine) []reservedLine {
	count := map[string]int{}
	for _, l := range b {
		count[l.text]++
	}
	var out []reservedLine
	for _, l := range a {
		if count[l.text] > 0 {
			count[l.text]--
		} else {
			out = append(out, l)
		}
	}
	return out
}

// looseID reads an id attribute from a line that may not be a well-formed
// mark, to tell an altered card from a new one.
var looseIDAttr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bid\s*=\s*["']([^"']*)`) })

func looseID(line string) string {
	if m := looseIDAttr().FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

func hasID(ls []reservedLine, id string) bool {
	for _, l := range ls {
		if looseID(l.text) == id {
			return true
		}
	}
	return false
}

// InsertDecisionMarks writes a <Decision id="..." /> line for each id, in
// order, directly after block afterBlock of source, or at the end when
// afterBlock is -1 or names no block. Each mark is a block of its own, so it
// gets blank lines around it. The ids are the server's own (UUIDs); an id that
// could not be read back as a mark is a bug in the caller, and panics.
func InsertDecisionMarks(source string, afterBlock int, ids []string) string {
	if len(ids) == 0 {
		return source
	}
	var marks []string
	for i, id := range ids {
		if !markID().MatchString(id) {
			panic(fmt.Sprintf("room: invalid decision id %q", id))
		}
		if i > 0 {
			marks = append(marks, "")
		}
		marks = append(marks, `<Decision id="`+id+`" />`)
	}

	ls := splitLines(source)
	all := make([]string, ls.count())
	for n := range all {
		all[n] = ls.line(n + 1)
	}
	at := len(all) // insert before all[at]
	if blocks := Blocks(source); afterBlock >= 0 && afterBlock < len(blocks) {
		at = blocks[afterBlock].EndLine
	}
	if at > 0 && !isBlank(all[at-1]) {
		marks = append([]string{""}, marks...)
	}
	if at < len(all) && !isBlank(all[at]) {
		marks = append(marks, "")
	}
	out := append(append(append([]string{}, all[:at]...), marks...), all[at:]...)
	joined := strings.Join(out, "\n")
	if at == len(all) || strings.HasSuffix(source, "\n") {
		joined += "\n"
	}
	return joined
}

// lines indexes the lines of a source: the text between "\n"s. A final "\n"
// ends the last line rather than starting an empty one, as editors count.
type lines struct {
	src    string
	starts []int // byte offset of each line's first byte
}

func splitLines(src string) lines {
	// Sized at once: a plan is split on every read_plan call, and growing
	// the slice would allocate about twice its size.
	ls := lines{src: src, starts: make([]int, 0, strings.Count(src, "\n")+1)}
	for i := 0; i < len(src); {
		ls.starts = append(ls.starts, i)
		nl := strings.IndexByte(src[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return ls
}

func (ls lines) count() int { return len(ls.starts) }

// bounds is the byte range of line n (1-based) without its line break, and
// where the next line starts.
func (ls lines) bounds(n int) (start, end, next int) {
	start = ls.starts[n-1]
	if n < len(ls.starts) {
		next = ls.starts[n]
		return start, next - 1, next
	}
	end = len(ls.src)
	if strings.HasSuffix(ls.src, "\n") {
		end--
	}
	return start, end, len(ls.src)
}

func (ls lines) line(n int) string {
	start, end, _ := ls.bounds(n)
	return ls.src[start:end]
}

// span is lines first to last joined by "\n", without a final line break.
func (ls lines) span(first, last int) string {
	start, _, _ := ls.bounds(first)
	_, end, _ := ls.bounds(last)
	return ls.src[start:end]
}

// lineAt is the 1-based line holding byte offset.
func (ls lines) lineAt(offset int) int {
	return sort.Search(len(ls.starts), func(i int) bool { return ls.starts[i] > offset })
}

func isBlank(line string) bool {
	return strings.Trim(line, " \t") == ""
}
