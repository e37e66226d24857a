package room

// This file compares two versions of a plan when the server makes the
// change itself: an HTTP PUT or MCP's update_document sends a whole new
// plan, and decision cards and accepted comments write lines of their own.
// The change set every tab receives, that rebases what people are typing
// and that moves comment threads, must say what changed: the lines that
// changed and, within them, the words, never a rewrite of everything from
// the first difference to the last (docs/room-protocol.md, "plan:updates").
//
// The lines (or words) that occur once in both texts anchor the comparison
// (patience diff), so a paragraph still there is kept, and the stretches
// between them are compared by Myers' algorithm. It is bounded in time
// whatever the texts: Myers' algorithm looks for at most diffCap edits in
// one stretch, and all of them together take at most diffBudget steps; a
// stretch past either is replaced whole, less what it starts and ends with
// in common. A coarser change set is still a correct one: it turns the old
// text into the new.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// diffCap is the most edits (lines or words) Myers' algorithm looks
	// for in one comparison before the comparison falls back.
	diffCap = 256
	// diffBudget bounds the steps of Myers' algorithm in one DiffChangeSet.
	diffBudget = 1 << 20
	// diffWordBytes is the longest run of changed lines, on either side,
	// that is compared word by word; a longer one is replaced whole, less
	// what it starts and ends with in common.
	diffWordBytes = 16 << 10
)

// textEdit replaces before[oldFrom:oldTo] with after[newFrom:newTo]
// (byte offsets; every offset is on a character boundary).
type textEdit struct {
	oldFrom, oldTo, newFrom, newTo int
}

// DiffChangeSet returns a change set that turns before into after, as a
// comparison by lines, then by words within the changed lines, then by
// characters within the changed words finds it: one section per run of
// changes, the text between them kept. Both must already be normalised
// (see NormalizeLineEndings) and valid UTF-8. Every boundary falls between
// whole characters, never inside a surrogate pair; a change within an
// emoji sequence or before a combining mark may split it, which is still
// valid text.
func DiffChangeSet(before, after string) ChangeSet {
	d := differ{budget: diffBudget}
	return changeSetOf(before, after, d.text(before, after))
}

// changeSetOf is the change set of edits, which are in order, do not
// overlap, and leave between them text that before and after share. Each
// edit is a section of its own, even next to another: a deletion beside
// an insertion is not a replacement of one by the other.
func changeSetOf(before, after string, edits []textEdit) ChangeSet {
	var c ChangeSet
	pos := 0
	for _, e := range edits {
		if e.oldFrom == e.oldTo && e.newFrom == e.newTo {
			continue
		}
		if e.oldFrom > pos {
			c.addKept(UTF16Len(before[pos:e.oldFrom]))
		}
		c.add(section{len: UTF16Len(before[e.oldFrom:e.oldTo]), insert: after[e.newFrom:e.newTo]})
		pos = e.oldTo
	}
	if pos < len(before) {
		c.addKept(UTF16Len(before[pos:]))
	}
	return c
}

// addKept adds a kept run, joined to one before it.
func (c *ChangeSet) addKept(n int) {
	if last := len(c.sections) - 1; last >= 0 && c.sections[last].kept {
		c.sections[last].len += n
		c.lenBase += n
		c.lenAfter += n
		return
	}
	c.add(section{len: n, kept: true})
}

// differ is one comparison: what is left of its budget, and room it
// reuses from one run of lines or words to the next.
type differ struct {
	budget   int
	wordIDs  map[string]int32 // the numbers of one run of lines' words
	v, trace []int32          // myers' diagonals and their rounds
	distinct int              // how many numbers the last tokenIDs gave
	seen     []seenAt         // uniqueCommon's count, by number
}

// seenAt counts an element in each sequence, and where it was in a.
type seenAt struct{ na, nb, i int32 }

// text returns the edits that turn before into after: the lines between
// the longest common prefix and suffix compared as lines, and the runs of
// lines that changed compared as words.
func (d *differ) text(before, after string) []textEdit {
	lo, oldHi, newHi := diffBounds(before, after)
	if lo == oldHi && lo == newHi {
		return nil
	}
	a, b := splitLinesKeep(before[lo:oldHi]), splitLinesKeep(after[lo:newHi])
	offA, offB := a.offs, b.offs
	// The last line of a text may lack its line break; it is still the
	// same line as one that has it, and the break is the change.
	ia, ib := d.tokenIDs(a, b, make(map[string]int32, a.n()+b.n()), true)
	var edits []textEdit
	add := func(e textEdit) {
		if n := len(edits); n > 0 && edits[n-1].oldTo == e.oldFrom && edits[n-1].newTo == e.newFrom {
			edits[n-1].oldTo, edits[n-1].newTo = e.oldTo, e.newTo
			return
		}
		edits = append(edits, e)
	}
	hunks := slideToBlocks(d.seq(ia, ib), ia, ib, a, b)
	i, j := 0, 0
	for _, h := range append(hunks, hunk{a.n(), a.n(), b.n(), b.n()}) {
		for ; i < h.a0; i, j = i+1, j+1 { // kept lines
			if oe, ne := lo+offA[i+1], lo+offB[j+1]; a.len(i) > b.len(j) {
				add(textEdit{oe - 1, oe, ne, ne})
			} else if a.len(i) < b.len(j) {
				add(textEdit{oe, oe, ne - 1, ne})
			}
		}
		e := textEdit{lo + offA[h.a0], lo + offA[h.a1], lo + offB[h.b0], lo + offB[h.b1]}
		switch {
		case h.a0 == h.a1 && h.b0 == h.b1:
		case h.a0 == h.a1 || h.b0 == h.b1:
			add(e) // whole lines inserted or deleted
		default:
			for _, w := range d.words(before, after, e) {
				add(w)
			}
		}
		i, j = h.a1, h.b1
	}
	return edits
}

// slideToBlocks moves each run of lines only inserted or only deleted, where
// the lines around it allow (the same line before it as its last, or after
// it as its first), to where it starts and ends at a blank line, or at
// least starts at one: a deleted block then goes with a blank line beside
// it, not with a line of its neighbour that reads the same (a code fence's
// closing line, say).
func slideToBlocks(hs []hunk, ia, ib []int32, a, b tokens) []hunk {
	for k := range hs {
		h := &hs[k]
		seq, lines, lo, hi := ia, a, h.a0, h.a1 // the side that changed
		if h.a0 == h.a1 {
			seq, lines, lo, hi = ib, b, h.b0, h.b1
		} else if h.b0 != h.b1 {
			continue
		}
		// How far the run may move: up over kept lines after the hunk
		// before, down over kept lines before the hunk after.
		floor, ceil := 0, len(seq)
		if k > 0 {
			floor = max(hs[k-1].a1-h.a0+lo, hs[k-1].b1-h.b0+lo)
		}
		if k+1 < len(hs) {
			ceil = min(hs[k+1].a0-h.a1+hi, hs[k+1].b0-h.b1+hi)
		}
		up := 0
		for lo-up-1 >= floor && seq[lo-up-1] == seq[hi-up-1] {
			up++
		}
		down := 0
		for hi+down < ceil && seq[hi+down] == seq[lo+down] {
			down++
		}
		blank := func(i int) bool { return i < 0 || i >= lines.n() || strings.TrimSpace(lines.at(i)) == "" }
		score := func(shift int) int {
			from, to := lo+shift, hi+shift // the run is lines[from:to]
			n := 0
			if blank(from-1) || blank(from) {
				n += 2
			}
			if blank(to) || blank(to-1) {
				n++
			}
			return n
		}
		best := 0
		for shift := -up; shift <= down; shift++ {
			if score(shift) > score(best) {
				best = shift
			}
		}
		h.a0, h.a1, h.b0, h.b1 = h.a0+best, h.a1+best, h.b0+best, h.b1+best
	}
	return hs
}

// diffBounds is where before and after differ: from lo to oldHi in before
// and lo to newHi in after, each the longest common prefix and suffix
// given back up to whole blocks (runs of lines between blank lines), so
// that a run of lines that could go with either of two blocks (a code
// fence's line) can be moved to its own (slideToBlocks). Outside these
// bounds nothing changes.
func diffBounds(before, after string) (lo, oldHi, newHi int) {
	prefix := commonPrefix(before, after)
	suffix := commonSuffix(before[prefix:], after[prefix:])
	if prefix == len(before) && prefix == len(after) {
		return prefix, prefix, prefix
	}
	lo = strings.LastIndexByte(before[:prefix], '\n') + 1
	for lo > 0 {
		start := strings.LastIndexByte(before[:lo-1], '\n') + 1
		if strings.TrimSpace(before[start:lo]) == "" {
			break
		}
		lo = start
	}
	oldHi, newHi = len(before)-suffix, len(after)-suffix
	next := func() int { // the length of the suffix's next line
		if i := strings.IndexByte(before[oldHi:], '\n'); i >= 0 {
			return i + 1
		}
		return len(before) - oldHi
	}
	if !lineBoundary(before, oldHi) || !lineBoundary(after, newHi) {
		n := next()
		oldHi, newHi = oldHi+n, newHi+n
	}
	for oldHi > lo && oldHi < len(before) && strings.TrimSpace(before[strings.LastIndexByte(before[:oldHi-1], '\n')+1:oldHi]) != "" {
		n := next()
		oldHi, newHi = oldHi+n, newHi+n
	}
	return lo, oldHi, newHi
}

// lineBoundary reports whether offset i of s starts a line or ends s.
func lineBoundary(s string, i int) bool {
	return i == 0 || i == len(s) || s[i-1] == '\n'
}

// tokens is a text cut into lines or words: token i is s[offs[i]:offs[i+1]].
type tokens struct {
	s    string
	offs []int
}

func (t tokens) n() int          { return len(t.offs) - 1 }
func (t tokens) at(i int) string { return t.s[t.offs[i]:t.offs[i+1]] }
func (t tokens) len(i int) int   { return t.offs[i+1] - t.offs[i] }

// splitLinesKeep cuts s into lines that keep their "\n" (the last may have
// none).
func splitLinesKeep(s string) tokens {
	offs := make([]int, 1, strings.Count(s, "\n")+2)
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s)
		} else {
			j += i + 1
		}
		offs = append(offs, j)
		i = j
	}
	return tokens{s, offs}
}

// tokenIDs numbers the distinct tokens of a and b from 1, in ids (empty),
// so the comparison compares numbers; with breakLast, the last token of
// each is read with a line break after it when it has none. Tokens without
// a letter or a digit (blank lines, spaces, punctuation, a code fence) get
// negative numbers: they anchor nothing (uniqueCommon).
func (d *differ) tokenIDs(a, b tokens, ids map[string]int32, breakLast bool) ([]int32, []int32) {
	next := int32(0)
	number := func(t tokens) []int32 {
		out := make([]int32, t.n())
		for i := range out {
			s := t.at(i)
			if breakLast && i == len(out)-1 && !strings.HasSuffix(s, "\n") {
				s += "\n"
			}
			id, ok := ids[s]
			if !ok {
				next++
				id = next
				if !hasWordChar(s) {
					id = -id
				}
				ids[s] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib := number(a), number(b)
	d.distinct = int(next)
	return ia, ib
}

// hasWordChar reports whether s holds a letter or a digit.
func hasWordChar(s string) bool {
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r|0x20 && r|0x20 <= 'z' || '0' <= r && r <= '9' {
				return true
			}
		} else if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// words refines a run of changed lines to the words that changed in it, and
// each changed run of words to the characters that differ. A run of lines
// too long to compare, or one the budget no longer covers, is one
// replacement of what lies between the run's common start and end.
func (d *differ) words(before, after string, e textEdit) []textEdit {
	o, n := before[e.oldFrom:e.oldTo], after[e.newFrom:e.newTo]
	if len(o) > diffWordBytes || len(n) > diffWordBytes || d.budget <= 0 {
		return []textEdit{trimEdit(before, after, e)}
	}
	// Only the words between what the two start and end with in common
	// need comparing: from the start of the word the difference starts in
	// to the end of the word it ends in.
	p := commonPrefix(o, n)
	for p > 0 {
		r, size := utf8.DecodeLastRuneInString(o[:p])
		if !wordRune(r) {
			break
		}
		p -= size
	}
	q := commonSuffix(o[p:], n[p:])
	for q > 0 {
		r, size := utf8.DecodeRuneInString(o[len(o)-q:])
		if !wordRune(r) {
			break
		}
		q -= size
	}
	e = textEdit{e.oldFrom + p, e.oldTo - q, e.newFrom + p, e.newTo - q}
	o, n = o[p:len(o)-q], n[p:len(n)-q]
	a, b := splitWords(o), splitWords(n)
	offA, offB := a.offs, b.offs
	if d.wordIDs == nil {
		d.wordIDs = map[string]int32{}
	}
	clear(d.wordIDs)
	ia, ib := d.tokenIDs(a, b, d.wordIDs, false)
	hunks := cleanupHunks(d.seq(ia, ib), offA, offB)
	out := make([]textEdit, 0, len(hunks))
	for _, h := range hunks {
		// Within a word: 漢字 is one word, and 漢字 + 漢字 two.
		out = append(out, trimEdit(before, after, textEdit{e.oldFrom + offA[h.a0], e.oldFrom + offA[h.a1], e.newFrom + offB[h.b0], e.newFrom + offB[h.b1]}))
	}
	return out
}

// wordRune reports whether r can be part of a word (splitWords): a letter,
// a digit, or what glues to the character before it.
func wordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r|0x20 && r|0x20 <= 'z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || glueRune(r) || r >= 0x1F000 // emoji sequences
}

// glueRune reports whether r stays with the character before it: a mark,
// a zero-width joiner, a variation selector, a skin tone.
func glueRune(r rune) bool {
	return r >= utf8.RuneSelf && (unicode.Is(unicode.M, r) || r == '\u200d' || r == '\ufe0f' || r >= 0x1F3FB && r <= 0x1F3FF)
}

// trimEdit is e less the characters its two sides start and end with in
// common.
func trimEdit(before, after string, e textEdit) textEdit {
	o, n := before[e.oldFrom:e.oldTo], after[e.newFrom:e.newTo]
	p := commonPrefix(o, n)
	s := commonSuffix(o[p:], n[p:])
	return textEdit{e.oldFrom + p, e.oldTo - s, e.newFrom + p, e.newTo - s}
}

// splitWords cuts s into words (letters and digits, with the marks and
// joiners that belong to them), runs of spaces, and single other
// characters.
func splitWords(s string) tokens {
	offs := make([]int, 1, len(s)/2+2)
	kind := func(r rune) int {
		switch {
		case r == ' ' || r == '\t':
			return 1
		case wordRune(r) && !glueRune(r) && r < 0x1F000:
			return 2
		}
		return 3
	}
	prev, joined := -1, false
	for i, r := range s {
		k := kind(r)
		// A mark, a joiner, a variation selector or a skin tone, and what
		// a zero-width joiner joins, stay with the character before them.
		glue := i > 0 && (joined || glueRune(r))
		joined = r == '\u200d'
		if i > 0 && !glue && (k != prev || k == 3) {
			offs = append(offs, i)
		}
		if !glue {
			prev = k
		}
	}
	if len(s) > 0 {
		offs = append(offs, len(s))
	}
	return tokens{s, offs}
}

// cleanupHunks joins two changes separated by fewer bytes in common than
// either changes: a word or a space that happens to survive inside a
// rewritten sentence is not worth a change of its own on either side.
func cleanupHunks(hs []hunk, offA, offB []int) []hunk {
	if len(hs) < 2 {
		return hs
	}
	size := func(h hunk) int { return max(offA[h.a1]-offA[h.a0], offB[h.b1]-offB[h.b0]) }
	out := []hunk{hs[0]}
	for _, h := range hs[1:] {
		last := &out[len(out)-1]
		if between := offA[h.a0] - offA[last.a1]; between <= min(size(*last), size(h)) {
			last.a1, last.b1 = h.a1, h.b1
			continue
		}
		out = append(out, h)
	}
	return out
}

// hunk replaces a[a0:a1] with b[b0:b1] in a comparison of two sequences.
type hunk struct {
	a0, a1, b0, b1 int
}

// seq compares two sequences: their common start and end are kept, and
// what lies between is compared by middle.
func (d *differ) seq(a, b []int32) []hunk {
	a0, b0 := 0, 0
	for a0 < len(a) && b0 < len(b) && a[a0] == b[b0] {
		a0, b0 = a0+1, b0+1
	}
	a1, b1 := len(a), len(b)
	for a1 > a0 && b1 > b0 && a[a1-1] == b[b1-1] {
		a1, b1 = a1-1, b1-1
	}
	return d.middle(a, b, a0, a1, b0, b1, true)
}

// middle compares a[a0:a1] with b[b0:b1], which differ at both ends. When
// anchor, the elements that occur once in each, in the same order, are
// kept first (patience diff: a paragraph that is still there is kept
// whatever the blank lines around it do), and what lies between them is
// compared the same way without anchors. The rest is Myers' algorithm
// within its bounds, else one replacement.
func (d *differ) middle(a, b []int32, a0, a1, b0, b1 int, anchor bool) []hunk {
	switch {
	case a0 == a1 && b0 == b1:
		return nil
	case a0 == a1 || b0 == b1:
		return []hunk{{a0, a1, b0, b1}}
	}
	if anchor {
		if anchors := d.uniqueCommon(a, b, a0, a1, b0, b1); len(anchors) > 0 {
			var out []hunk
			anchors = append(anchors, [2]int{a1, b1})
			for _, an := range anchors {
				// Between two anchors: keep what they share, compare the rest.
				x0, y0, x1, y1 := a0, b0, an[0], an[1]
				for x0 < x1 && y0 < y1 && a[x0] == b[y0] {
					x0, y0 = x0+1, y0+1
				}
				for x1 > x0 && y1 > y0 && a[x1-1] == b[y1-1] {
					x1, y1 = x1-1, y1-1
				}
				out = append(out, d.middle(a, b, x0, x1, y0, y1, false)...)
				a0, b0 = an[0]+1, an[1]+1
			}
			return out
		}
	}
	if hs, ok := d.myers(a[a0:a1], b[b0:b1]); ok {
		for i := range hs {
			hs[i].a0, hs[i].a1, hs[i].b0, hs[i].b1 = hs[i].a0+a0, hs[i].a1+a0, hs[i].b0+b0, hs[i].b1+b0
		}
		return hs
	}
	return []hunk{{a0, a1, b0, b1}}
}

// myers is Myers' O(ND) comparison of a and b, which differ at both
// ends. It gives up (false) past diffCap edits or the differ's budget.
func (d *differ) myers(a, b []int32) ([]hunk, bool) {
	if d.budget <= 0 {
		return nil, false
	}
	n, m := len(a), len(b)
	limit := min(n+m, diffCap)
	off := limit + 1
	// v[off+k] is the furthest x on diagonal k. The trace holds, from
	// e*e+2*e on, v[-e-1 .. e+1] as it was before round e.
	if cap(d.v) < 2*limit+3 {
		d.v = make([]int32, 2*limit+3)
	}
	v := d.v[:2*limit+3]
	clear(v)
	trace := d.trace[:0]
	defer func() { d.trace = trace }()
	for e := 0; e <= limit; e++ {
		trace = append(trace, v[off-e-1:off+e+2]...)
		for k := -e; k <= e; k += 2 {
			var x int
			if k == -e || k != e && v[off+k-1] < v[off+k+1] {
				x = int(v[off+k+1]) // down: b[y-1] inserted
			} else {
				x = int(v[off+k-1]) + 1 // right: a[x-1] deleted
			}
			y := x - k
			start := x
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			d.budget -= 1 + x - start
			v[off+k] = int32(x)
			if x >= n && y >= m {
				return myersHunks(trace, n, m, e), true
			}
		}
		if d.budget <= 0 {
			return nil, false
		}
	}
	return nil, false
}

// myersHunks walks back from (n, m) through the rounds of myers and
// returns the hunks between the diagonals it kept.
func myersHunks(trace []int32, n, m, rounds int) []hunk {
	type run struct{ x, y, n int } // a[x:x+n] == b[y:y+n]
	var runs []run
	x, y := n, m
	for e := rounds; e > 0; e-- {
		v := trace[e*e+2*e:]
		at := func(k int) int { return int(v[k+e+1]) }
		k := x - y
		var px, py, mx, my int
		if k == -e || k != e && at(k-1) < at(k+1) {
			px = at(k + 1)
			py = px - (k + 1)
			mx, my = px, py+1
		} else {
			px = at(k - 1)
			py = px - (k - 1)
			mx, my = px+1, py
		}
		if x > mx {
			runs = append(runs, run{mx, my, x - mx})
		}
		x, y = px, py
	}
	// Round 0 is a run from the start; these sequences differ there, so it
	// is empty, but a caller's could not.
	if x > 0 {
		runs = append(runs, run{0, 0, x})
	}
	var out []hunk
	pa, pb := 0, 0
	for i := len(runs) - 1; i >= -1; i-- {
		r := run{n, m, 0}
		if i >= 0 {
			r = runs[i]
		}
		if r.x > pa || r.y > pb {
			out = append(out, hunk{pa, r.x, pb, r.y})
		}
		pa, pb = r.x+r.n, r.y+r.n
	}
	return out
}

// uniqueCommon returns the pairs (i, j) with a[i] == b[j] >= 0 occurring
// once in a[a0:a1] and once in b[b0:b1], the longest run of them in the
// same order in both (patience diff's anchors).
func (d *differ) uniqueCommon(a, b []int32, a0, a1, b0, b1 int) [][2]int {
	if cap(d.seen) < d.distinct+1 {
		d.seen = make([]seenAt, d.distinct+1)
	}
	count := d.seen[:d.distinct+1]
	abs := func(id int32) int32 { return max(id, -id) }
	for i := a0; i < a1; i++ {
		s := &count[abs(a[i])]
		s.na++
		s.i = int32(i)
	}
	for j := b0; j < b1; j++ {
		count[abs(b[j])].nb++
	}
	var pairs [][2]int
	for j := b0; j < b1; j++ {
		if s := count[abs(b[j])]; s.na == 1 && s.nb == 1 && b[j] >= 0 {
			pairs = append(pairs, [2]int{int(s.i), j})
		}
	}
	for i := a0; i < a1; i++ {
		count[abs(a[i])] = seenAt{}
	}
	for j := b0; j < b1; j++ {
		count[abs(b[j])] = seenAt{}
	}
	// The longest increasing run of i, by patience sorting.
	var tops []int // tops[l]: index in pairs of the smallest end of a run of length l+1
	prev := make([]int, len(pairs))
	for p, pr := range pairs {
		lo, hi := 0, len(tops)
		for lo < hi {
			mid := (lo + hi) / 2
			if pairs[tops[mid]][0] < pr[0] {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		prev[p] = -1
		if lo > 0 {
			prev[p] = tops[lo-1]
		}
		if lo == len(tops) {
			tops = append(tops, p)
		} else {
			tops[lo] = p
		}
	}
	if len(tops) == 0 {
		return nil
	}
	out := make([][2]int, len(tops))
	for p, l := tops[len(tops)-1], len(tops)-1; p >= 0; p, l = prev[p], l-1 {
		out[l] = pairs[p]
	}
	return out
}

// oneSpanChangeSet is the change set of one replacement between the
// longest common prefix and suffix of before and after: what DiffChangeSet
// gave before it compared lines and words, kept as the baseline of its
// benchmark and for the fixtures that show CodeMirror takes its output.
func oneSpanChangeSet(before, after string) ChangeSet {
	prefix := commonPrefix(before, after)
	suffix := commonSuffix(before[prefix:], after[prefix:])
	return changeSetOf(before, after, []textEdit{{prefix, len(before) - suffix, prefix, len(after) - suffix}})
}
