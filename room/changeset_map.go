package room

// This file holds the two operations on change sets that collaborative
// editing is built from, ported from @codemirror/state (composeSets and
// mapSet in its dist/index.js) so that the server, and tests that play a
// browser, transform changes exactly as @codemirror/collab does in the
// browser: receiveUpdates and rebaseUpdates are nothing but these two.
//
// The port keeps CodeMirror's structure line for line (a reader can hold the
// two side by side), because the output must match byte for byte, and that
// includes where it merges adjacent sections and where it does not.
// changeset_map_test.go replays what the real library computed
// (ui/scripts/changeset-fixtures.mjs writes testdata/changeset-map.json).
//
// In CodeMirror a section is a pair of numbers (len, ins): ins is -1 for a
// kept run and otherwise the length of the replacement. Here a section holds
// its text instead, so ins is implicit; the iterator below brings the number
// back, and sectionWriter only ever needs to know whether it is -1, 0, or
// neither.

import (
	"errors"
	"fmt"
)

// ErrMismatchedLengths is returned by Compose and Map for change sets that do
// not fit together; CodeMirror throws "Mismatched change set lengths".
var ErrMismatchedLengths = errors.New("mismatched change set lengths")

// Compose returns the change set that makes c's changes and then other's:
// other must apply to the document c produces (other.LenBase() ==
// c.LenAfter()), and the result applies to the document c applies to.
//
// Unlike CodeMirror, which skips the length check when either set is empty,
// Compose always checks: a server must not accept a result that only looks
// right.
func (c ChangeSet) Compose(other ChangeSet) (ChangeSet, error) {
	if c.lenAfter != other.lenBase {
		return ChangeSet{}, fmt.Errorf("%w: composing a change set that produces %d code units with one for %d",
			ErrMismatchedLengths, c.lenAfter, other.lenBase)
	}
	// These shortcuts are CodeMirror's, and they are visible: they return a
	// set as it came, without the normalisation composeSets does.
	switch {
	case c.empty():
		return other, nil
	case other.empty():
		return c, nil
	}
	return composeSets(c, other)
}

// Map returns c moved over other, a change set for the same document, so that
// it applies to the document other produces. Where both insert at the same
// place, before says whether c's text goes first; otherwise other's does.
//
// This is operational transformation: for A and B made on the same text,
// A.Compose(B.Map(A, false)) and B.Compose(A.Map(B, true)) give the same text.
// Map checks lengths even when other is empty, unlike CodeMirror.
func (c ChangeSet) Map(other ChangeSet, before bool) (ChangeSet, error) {
	if c.lenBase != other.lenBase {
		return ChangeSet{}, fmt.Errorf("%w: mapping a change set for %d code units over one for %d",
			ErrMismatchedLengths, c.lenBase, other.lenBase)
	}
	if other.empty() {
		return c, nil
	}
	return mapSet(c, other, before)
}

// empty is CodeMirror's ChangeDesc.empty: no sections, or one kept run. A
// set such as [2,3] changes nothing either but does not count.
func (c ChangeSet) empty() bool {
	return len(c.sections) == 0 || len(c.sections) == 1 && c.sections[0].kept
}

// Values of sectionIter.ins besides a replacement's length.
const (
	insKept = -1 // the section keeps its run of the document
	insDone = -2 // the iterator is past the last section
)

// sectionIter is CodeMirror's SectionIter: a cursor over a change set's
// sections that can stop partway through one.
type sectionIter struct {
	sections []section
	i        int    // index of the section after the current one
	len      int    // units of the base document left in the current section
	ins      int    // insKept, insDone, or units of replacement text left
	off      int    // units already consumed of the current section (base or text)
	text     string // the current section's replacement text, whole
}

func newSectionIter(c ChangeSet) *sectionIter {
	it := &sectionIter{sections: c.sections}
	it.next()
	return it
}

func (it *sectionIter) next() {
	if it.i < len(it.sections) {
		s := it.sections[it.i]
		it.i++
		it.len, it.text = s.len, s.insert
		if s.kept {
			it.ins = insKept
		} else {
			it.ins = UTF16Len(s.insert)
		}
	} else {
		it.len, it.ins, it.text = 0, insDone, ""
	}
	it.off = 0
}

func (it *sectionIter) done() bool { return it.ins == insDone }

// len2 is the length of the current section in the document after it.
func (it *sectionIter) len2() int {
	if it.ins < 0 {
		return it.len
	}
	return it.ins
}

// forward consumes n units of the base document.
func (it *sectionIter) forward(n int) {
	if n == it.len {
		it.next()
	} else {
		it.len -= n
		it.off += n
	}
}

// forward2 consumes n units of the document after the change: of the
// replacement text, unless the section is kept.
func (it *sectionIter) forward2(n int) {
	switch {
	case it.ins == insKept:
		it.forward(n)
	case n == it.ins:
		it.next()
	default:
		it.ins -= n
		it.off += n
	}
}

// textBit is the next n units of the current replacement text. CodeMirror
// would cut a surrogate pair in two; a Go string cannot hold half of one, so
// that is an error here. It only happens when other's boundary falls inside
// a character c inserted, which Apply would refuse anyway.
func (it *sectionIter) textBit(n int) (string, error) {
	from, err := advance(it.text, 0, it.off)
	if err != nil {
		return "", fmt.Errorf("%w: at offset %d of an insertion", err, it.off)
	}
	to, err := advance(it.text, from, n)
	if err != nil {
		return "", fmt.Errorf("%w: at offset %d of an insertion", err, it.off+n)
	}
	return it.text[from:to], nil
}

// sectionWriter builds a change set as CodeMirror's addSection and addInsert
// do: every section arrives as add(len, ins) and, when ins > 0, is followed at
// once by addText with exactly ins units of text.
type sectionWriter struct {
	sections []section
}

// add is addSection. It merges a kept run into a kept run, a deletion into a
// deletion and an insertion into an insertion; forceJoin (compose's "open"
// replacement, still being built from pieces) merges into the last section
// whatever it is. CodeMirror only passes forceJoin while a replacement is
// open, so ins is never insKept then.
func (w *sectionWriter) add(n, ins int, forceJoin bool) {
	if n == 0 && ins <= 0 {
		return
	}
	last := len(w.sections) - 1
	switch {
	case last >= 0 && ins == insKept && w.sections[last].kept,
		last >= 0 && ins == 0 && !w.sections[last].kept && w.sections[last].insert == "":
		w.sections[last].len += n
	case last >= 0 && n == 0 && w.sections[last].len == 0:
		// An insertion right after an insertion: addText extends it.
	case forceJoin:
		w.sections[last].len += n
	default:
		w.sections = append(w.sections, section{len: n, kept: ins == insKept})
	}
}

// addText is addInsert: the text of the section add just made or extended.
func (w *sectionWriter) addText(text string) {
	if text != "" {
		w.sections[len(w.sections)-1].insert += text
	}
}

func (w *sectionWriter) changeSet() ChangeSet {
	var c ChangeSet
	c.sections = make([]section, 0, len(w.sections))
	for _, s := range w.sections {
		c.add(s)
	}
	return c
}

// composeSets is CodeMirror's composeSets: a walks the document between the
// two sets by its output side (len2, forward2), b by its input side.
func composeSets(setA, setB ChangeSet) (ChangeSet, error) {
	var out sectionWriter
	a, b := newSectionIter(setA), newSectionIter(setB)
	for open := false; ; {
		switch {
		case a.done() && b.done():
			return out.changeSet(), nil
		case a.ins == 0: // a deletion in A: B never sees that text
			out.add(a.len, 0, open)
			a.next()
		case b.len == 0 && !b.done(): // an insertion in B: A never saw that text
			out.add(0, b.ins, open)
			out.addText(b.text)
			b.next()
		case a.done() || b.done():
			return ChangeSet{}, ErrMismatchedLengths
		default:
			n := min(a.len2(), b.len)
			sectionsBefore := len(out.sections)
			switch {
			case a.ins == insKept:
				// A keeps the text; B keeps or replaces it (its text goes
				// in with its first piece, the rest of the piece is deleted).
				insB := insKept
				if b.ins != insKept {
					insB = 0
					if b.off == 0 {
						insB = b.ins
					}
				}
				out.add(n, insB, open)
				if insB > 0 {
					out.addText(b.text)
				}
			case b.ins == insKept:
				// B keeps part of A's insertion: that part survives. A's
				// deletion counts once, with its first piece.
				del := a.len
				if a.off > 0 {
					del = 0
				}
				out.add(del, n, open)
				bit, err := a.textBit(n)
				if err != nil {
					return ChangeSet{}, err
				}
				out.addText(bit)
			default:
				// B replaces part of A's insertion: only B's text survives.
				del, ins := a.len, b.ins
				if a.off > 0 {
					del = 0
				}
				if b.off > 0 {
					ins = 0
				}
				out.add(del, ins, open)
				if b.off == 0 {
					out.addText(b.text)
				}
			}
			// A replacement still going on in A or B must become one section
			// with whatever the next pieces add, as in CodeMirror.
			open = (a.ins > n || b.ins >= 0 && b.len > n) && (open || len(out.sections) > sectionsBefore)
			a.forward2(n)
			b.forward(n)
		}
	}
}

// mapSet is CodeMirror's mapSet: it walks setA and setB over their common
// base document and writes setA as it applies after setB.
func mapSet(setA, setB ChangeSet, before bool) (ChangeSet, error) {
	var out sectionWriter
	a, b := newSectionIter(setA), newSectionIter(setB)
	// A replacement in A may be written piece by piece; inserted is the
	// section index (a.i) whose text has been written already, so the text
	// goes in once, with the first piece.
	for inserted := -1; ; {
		switch {
		case a.done() && b.len > 0 || b.done() && a.len > 0:
			return ChangeSet{}, ErrMismatchedLengths
		case a.ins == insKept && b.ins == insKept:
			// Text both keep.
			n := min(a.len, b.len)
			out.add(n, insKept, false)
			a.forward(n)
			b.forward(n)
		case b.ins >= 0 && (a.ins < 0 || inserted == a.i || a.off == 0 && (b.len < a.len || b.len == a.len && !before)):
			// B's change comes first (by start, then length, then before):
			// its result is kept text for A, and the A changes it covers
			// are dropped, except their insertions.
			n := b.len
			out.add(b.ins, insKept, false)
			for n > 0 {
				if a.done() {
					// Cannot happen for sets of equal length; CodeMirror
					// would loop forever here.
					return ChangeSet{}, ErrMismatchedLengths
				}
				piece := min(a.len, n)
				if a.ins >= 0 && inserted < a.i && a.len <= piece {
					out.add(0, a.ins, false)
					out.addText(a.text)
					inserted = a.i
				}
				a.forward(piece)
				n -= piece
			}
			b.next()
		case a.ins >= 0:
			// A's change, up to the next change in B that is not a pure
			// deletion of less than what is left of it.
			n, left := 0, a.len
			for left > 0 {
				if b.ins == insKept {
					piece := min(left, b.len)
					n += piece
					left -= piece
					b.forward(piece)
				} else if b.ins == 0 && b.len < left {
					left -= b.len
					b.next()
				} else {
					break
				}
			}
			if inserted < a.i {
				out.add(n, a.ins, false)
				out.addText(a.text)
			} else {
				out.add(n, 0, false)
			}
			inserted = a.i
			a.forward(a.len - left)
		case a.done() && b.done():
			return out.changeSet(), nil
		default:
			return ChangeSet{}, ErrMismatchedLengths
		}
	}
}
