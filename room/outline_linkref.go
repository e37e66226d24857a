package room

// The link reference definitions at the start of a paragraph, cut out of it
// as goldmark's LinkReferenceParagraphTransformer cuts them, in time in
// proportion to the paragraph's length.
//
// goldmark's transformer reads each definition's label into a new slice by
// searching the paragraph's lines from the last, and removes each definition
// by moving all the lines after it: a paragraph of 40,000 one-line
// definitions took seconds. The reading below is goldmark's own
// (parser/link_ref.go and parser/link.go of goldmark v1.8.7, MIT License,
// Copyright (c) 2019 Yusuke Inuzuka), less what an outline never uses: the
// label's, destination's and title's values, and the references kept for
// inline links, which the outline does not parse. The lines it removes are
// exactly those goldmark removes; FuzzOutline compares the two.

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

type linkRefs struct{}

var closureOptions = text.FindClosureOptions{Nesting: false, Newline: true, Advance: true}

func (linkRefs) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	block := text.NewBlockReader(reader.Source(), lines)
	var removes [][2]int
	for {
		ref, start, end := readDefinition(block)
		if start < 0 {
			break
		}
		if start == 0 {
			ref.SetBlankPreviousLines(node.HasBlankPreviousLines())
		}
		node.Parent().InsertBefore(node.Parent(), node, ref)
		for i := start + 1; i < end; i++ {
			ref.Lines().Append(lines.At(i))
		}
		seg := ref.Lines().At(ref.Lines().Len() - 1)
		ref.Lines().Set(ref.Lines().Len()-1, seg.TrimRightSpace(reader.Source()))
		if start == end {
			end++
		}
		removes = append(removes, [2]int{start, end})
	}
	if len(removes) == 0 {
		return
	}
	rest := removeLines(lines.Sliced(0, lines.Len()), removes)
	if len(rest) == 0 {
		node.Parent().RemoveChild(node.Parent(), node)
		return
	}
	kept := text.NewSegments()
	kept.AppendAll(rest)
	node.SetLines(kept)
}

// removeLines gives what goldmark's removal loop leaves of lines:
//
//	offset := 0
//	for _, r := range removes {
//		lines = append(lines[:r[0]-offset], lines[r[1]-offset:]...)
//		offset = r[1]
//	}
//
// The lines are kept as a prefix that was copied (kept) and the rest of the
// original from t on, so each removal costs nothing unless it leaves lines
// before it, and those are copied once.
func removeLines(lines []text.Segment, removes [][2]int) []text.Segment {
	var kept []text.Segment
	t, offset := 0, 0
	for _, r := range removes {
		n := len(kept) + len(lines) - t
		if n == 0 {
			break
		}
		k, j := r[0]-offset, r[1]-offset
		lk := len(kept)
		switch {
		case k < 0 || j < k || j > n:
			// Not a removal goldmark's parse makes; do exactly what its loop does.
			all := append(kept, lines[t:]...)
			rest := append([]text.Segment(nil), all[j:]...)
			kept, t = append(all[:k], rest...), len(lines)
		case k <= lk && j >= lk:
			kept, t = kept[:k], t+j-lk
		case k > lk:
			kept = append(kept, lines[t:t+k-lk]...)
			t += j - lk
		default: // k <= j < lk
			kept = append(kept[:k], kept[j:]...)
		}
		offset = r[1]
	}
	return append(kept, lines[t:]...)
}

// readDefinition is goldmark's parseLinkReferenceDefinition without the
// values: the definition at the block's position, and the lines it takes,
// or -1.
func readDefinition(block text.Reader) (ast.Node, int, int) {
	block.SkipSpaces()
	line, _ := block.PeekLine()
	if line == nil {
		return nil, -1, -1
	}
	startLine, _ := block.Position()
	width, pos := util.IndentWidth(line, 0)
	if width > 3 {
		return nil, -1, -1
	}
	if width != 0 {
		pos++
	}
	if line[pos] != '[' {
		return nil, -1, -1
	}
	_, startPos := block.Position()
	block.Advance(pos + 1)
	segments, found := block.FindClosure('[', ']', closureOptions)
	if !found || blankSegments(block.Source(), segments) {
		return nil, -1, -1
	}
	if block.Peek() != ':' {
		return nil, -1, -1
	}
	block.Advance(1)
	block.SkipSpaces()
	if !readDestination(block) {
		return nil, -1, -1
	}
	line, _ = block.PeekLine()
	isNewLine := line == nil || util.IsBlank(line)

	endLine, _ := block.Position()
	_, spaces, _ := block.SkipSpaces()
	opener := block.Peek()
	if opener != '"' && opener != '\'' && opener != '(' {
		if !isNewLine {
			return nil, -1, -1
		}
		return definitionAt(startPos), startLine, endLine + 1
	}
	if spaces == 0 {
		return nil, -1, -1
	}
	block.Advance(1)
	closer := opener
	if opener == '(' {
		closer = ')'
	}
	if _, found = block.FindClosure(opener, closer, closureOptions); !found {
		if !isNewLine {
			return nil, -1, -1
		}
		block.AdvanceLine()
		return definitionAt(startPos), startLine, endLine + 1
	}
	line, _ = block.PeekLine()
	if line != nil && !util.IsBlank(line) {
		if !isNewLine {
			return nil, -1, -1
		}
		return definitionAt(startPos), startLine, endLine
	}
	endLine, _ = block.Position()
	return definitionAt(startPos), startLine, endLine + 1
}

func definitionAt(start text.Segment) ast.Node {
	ref := ast.NewLinkReferenceDefinition(nil, nil, nil)
	ref.Lines().Append(start)
	return ref
}

// blankSegments reports whether a label is blank: goldmark reads its value
// (the segments' bytes, after any padding of spaces) and asks util.IsBlank.
func blankSegments(source []byte, segs *text.Segments) bool {
	for i := range segs.Len() {
		s := segs.At(i)
		if !util.IsBlank(source[s.Start:s.Stop]) {
			return false
		}
	}
	return true
}

// readDestination is goldmark's parseLinkDestination, reporting only
// whether there is one.
func readDestination(block text.Reader) bool {
	block.SkipSpaces()
	line, _ := block.PeekLine()
	if block.Peek() == '<' {
		for i := 1; i < len(line); i++ {
			c := line[i]
			if c == '\\' && i < len(line)-1 && util.IsPunct(line[i+1]) {
				i++
				continue
			}
			if c == '>' {
				block.Advance(i + 1)
				return true
			}
		}
		return false
	}
	opened := 0
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' && i < len(line)-1 && util.IsPunct(line[i+1]) {
			i += 2
			continue
		} else if c == '(' {
			opened++
		} else if c == ')' {
			opened--
			if opened < 0 {
				break
			}
		} else if util.IsSpace(c) {
			break
		}
		i++
	}
	block.Advance(i)
	return i != 0
}
