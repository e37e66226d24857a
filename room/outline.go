package room

// The text goldmark parses for a plan's outline, and the outlines already
// parsed. docs/room-protocol.md ("The outline's bounds") states the bounds
// for readers.
//
// goldmark's block parser costs time in proportion to the square of some
// inputs: it works out each container's column by counting from the start
// of the line, once per container, so a line of 40,000 ">" costs a second
// and 250,000 a minute and more; every blank line inside nested lists is
// recorded once per open list; and the link reference definitions at the
// start of one paragraph are cut out one at a time, each cut moving the rest
// of the paragraph. Blocks therefore parses a view of the source whose
// nesting is bounded (outlineView) with a transformer of its own for link
// reference definitions (outline_linkref.go), and keeps what it parsed, so
// that every reader of a revision shares one parse (outlineCache).

import (
	"sort"
	"strings"
	"sync"
)

// MaxOutlineDepth is how many block containers (block quotes and list
// items) the outline reads on one line: the marker of a deeper one, and
// what follows it, count as the text of the 32nd.
const MaxOutlineDepth = 32

// MaxOutlineIndent is how many columns of a line's indentation the outline
// reads: a line indented further counts as indented this far. It bounds
// nesting built up over several lines, which a line's own markers do not.
const MaxOutlineIndent = 64

// outlineView is the text parsed for an outline. It has the source's lines
// in order, less every blank line that follows another (a run of blank
// lines means what one does in CommonMark), with each line's nesting
// bounded. line maps a view line back to its source line.
type outlineView struct {
	text    []byte
	starts  []int // byte offset of each view line in text
	line    []int // 1-based source line of each view line
	bounded bool  // some line's nesting was cut; otherwise the view parses as the source does
}

// newOutlineView builds the view of src in one pass over it.
func newOutlineView(src string) outlineView {
	v := outlineView{text: make([]byte, 0, len(src))}
	prevBlank := false
	n := 0
	for start := 0; start < len(src); {
		end, next := len(src), len(src)
		if nl := strings.IndexByte(src[start:], '\n'); nl >= 0 {
			end, next = start+nl, start+nl+1
		}
		n++
		line := src[start:end]
		blank := blankLine(line)
		if !(blank && prevBlank) {
			v.starts = append(v.starts, len(v.text))
			v.line = append(v.line, n)
			if !blank { // a blank line's spaces mean nothing, and goldmark reads them again for every open container
				var changed bool
				v.text, changed = appendBoundedLine(v.text, line)
				v.bounded = v.bounded || changed
			}
			if next > end {
				v.text = append(v.text, '\n')
			}
		}
		prevBlank = blank
		start = next
	}
	return v
}

// blankLine reports whether goldmark reads line as blank: spaces, tabs and
// carriage returns only.
func blankLine(line string) bool {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// sourceLine is the 1-based source line holding byte offset of the view.
func (v outlineView) sourceLine(offset int) int {
	i := sort.Search(len(v.starts), func(i int) bool { return v.starts[i] > offset }) - 1
	if i < 0 {
		return 1
	}
	return v.line[i]
}

// appendBoundedLine appends line with its nesting bounded: its indentation
// cut to MaxOutlineIndent columns, and the container marker past
// MaxOutlineDepth made text. It reports whether it changed anything.
func appendBoundedLine(dst []byte, line string) ([]byte, bool) {
	changed := false
	col, i := 0, 0
	for ; i < len(line) && (line[i] == ' ' || line[i] == '\t'); i++ {
		if line[i] == '\t' {
			col += 4 - col%4
		} else {
			col++
		}
	}
	if col > MaxOutlineIndent {
		for range MaxOutlineIndent {
			dst = append(dst, ' ')
		}
		line, i, changed = line[i:], 0, true
	}
	at := deepMarker(line, i)
	if at < 0 {
		return append(dst, line...), changed
	}
	dst = append(dst, line[:at]...)
	dst = append(dst, 'x') // a letter: no marker, no fence, no break
	return append(dst, line[at+1:]...), true
}

// deepMarker finds the byte that makes line's container marker number
// MaxOutlineDepth+1 a marker, scanning the markers from i, or -1. It counts
// generously (a gap of up to four spaces or tabs between markers, where
// CommonMark may read an indented code block), so it may stop a line
// goldmark would have nested a little less deeply, never one nested more. A
// run that CommonMark reads as a thematic break (- - -, * * *) ends the
// markers: it is a leaf, and nothing nests in it.
func deepMarker(line string, i int) int {
	tb := thematicTail(line)
	depth := 0
	for {
		gap := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') && gap <= 4 {
			i++
			gap++
		}
		if gap > 4 || i >= len(line) {
			return -1
		}
		width := markerWidth(line, i)
		if width == 0 {
			return -1
		}
		if tb.breakAt(line, i) {
			return -1
		}
		if depth++; depth > MaxOutlineDepth {
			if line[i] >= '0' && line[i] <= '9' {
				return i + width - 1 // 12. -> 12x
			}
			return i
		}
		i += width
	}
}

// markerWidth is the length of the container marker at line[i] (">", "-",
// "+", "*", or up to nine digits and "." or ")"; a list marker followed by
// a space, a tab or the end of the line), or 0.
func markerWidth(line string, i int) int {
	switch c := line[i]; {
	case c == '>':
		return 1
	case c == '-' || c == '+' || c == '*':
		if i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t' {
			return 1
		}
	case c >= '0' && c <= '9':
		j := i
		for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j < len(line) && (line[j] == '.' || line[j] == ')') &&
			(j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t') {
			return j + 1 - i
		}
	}
	return 0
}

// tail is where a line's longest suffix of one thematic break character
// ('-', '*' or '_') and blanks starts, and how many of that character it
// holds.
type tail struct {
	start int
	c     byte
	count int
}

func thematicTail(line string) tail {
	t := tail{start: len(line)}
	for j := len(line) - 1; j >= 0; j-- {
		switch c := line[j]; {
		case c == ' ' || c == '\t':
		case (c == '-' || c == '*' || c == '_') && (t.c == 0 || t.c == c):
			t.c = c
			t.count++
		default:
			return t
		}
		t.start = j
	}
	return t
}

// breakAt reports whether line from i on is a thematic break: i is in the
// tail and at least three of its characters follow.
func (t tail) breakAt(line string, i int) bool {
	if i < t.start || t.count < 3 {
		return false
	}
	n := 0
	for j := i; j < len(line) && n < 3; j++ {
		if line[j] == t.c {
			n++
		}
	}
	return n >= 3
}

// outlineCache keeps the outlines of the texts parsed last, by their text:
// a revision's outline is parsed once however many readers ask for it (a
// room's members, GET /plan, read_plan and read_document, comments, the
// description's chunks), and a reader that asks while it is being parsed
// waits for that parse instead of starting another. It holds at most
// cacheEntries outlines and cacheBlocks blocks in all.
var outlineCache = &blockCache{entries: map[string]*cachedOutline{}}

const (
	cacheEntries = 16
	cacheBlocks  = 200_000 // about 30 MB
)

type blockCache struct {
	mu      sync.Mutex // guards the fields below
	entries map[string]*cachedOutline
	order   []string // least recently used first
	blocks  int      // in all entries that are done
	parses  int      // parses run, for tests
}

type cachedOutline struct {
	done   chan struct{} // closed when blocks is set
	blocks []Block
}

// get returns the outline of source, parsing it with parse only when no
// other call has or is.
func (c *blockCache) get(source string, parse func(string) []Block) []Block {
	for {
		c.mu.Lock()
		e, ok := c.entries[source]
		if !ok {
			break // with c.mu held
		}
		c.touchLocked(source)
		c.mu.Unlock()
		<-e.done
		if e.blocks != nil {
			return e.blocks
		}
		// That parse panicked; its entry is gone, and this call parses.
	}
	e := &cachedOutline{done: make(chan struct{})}
	c.entries[source] = e
	c.order = append(c.order, source)
	c.parses++
	c.mu.Unlock()

	defer close(e.done) // a parse that panics still lets its waiters go
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if e.blocks == nil {
			c.dropLocked(source) // panicked: the next reader tries again
			return
		}
		c.blocks += len(e.blocks)
		c.evictLocked()
	}()
	e.blocks = parse(source)
	if e.blocks == nil {
		e.blocks = []Block{}
	}
	return e.blocks
}

func (c *blockCache) touchLocked(source string) {
	for i, s := range c.order {
		if s == source {
			copy(c.order[i:], c.order[i+1:])
			c.order[len(c.order)-1] = source
			return
		}
	}
}

func (c *blockCache) dropLocked(source string) {
	for i, s := range c.order {
		if s == source {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	if e := c.entries[source]; e != nil {
		c.blocks -= len(e.blocks)
	}
	delete(c.entries, source)
}

// evictLocked lets the least recently used outlines go, never the newest.
func (c *blockCache) evictLocked() {
	for len(c.order) > 1 && (len(c.order) > cacheEntries || c.blocks > cacheBlocks) {
		oldest := c.order[0]
		if e := c.entries[oldest]; e != nil {
			select {
			case <-e.done:
			default:
				return // still being parsed: its parser evicts later
			}
		}
		c.dropLocked(oldest)
	}
}

// parseCount is how many parses the cache has run.
func (c *blockCache) parseCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.parses
}
