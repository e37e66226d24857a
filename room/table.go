package room

// The table paragraph transformer: a paragraph whose second (or later) line
// is a delimiter row ("| --- | :-: |") becomes a table from the line before
// it. It is goldmark's extension.NewTableParagraphTransformer (goldmark
// v1.8.7, extension/table.go; MIT License, Copyright (c) 2019 Yusuke
// Inuzuka), copied so that the binary does not link goldmark's extension
// package, whose initialisation compiles a dozen regular expressions (for
// linkify, tables and others) at every start, about 1 ms of it. Two things
// differ from the original: its four delimiter expressions are compiled when
// first used, and escaped pipes inside code spans are not recorded, since
// only goldmark's table AST transformer (which an outline does not run) reads
// that record. The outline tests compare Blocks with goldmark's own
// transformer (referenceBlocks).

import (
	"bytes"
	"regexp"
	"sync"

	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

type tableDelims struct{ left, right, center, none *regexp.Regexp }

var tableDelimiters = sync.OnceValue(func() tableDelims {
	return tableDelims{
		left:   regexp.MustCompile(`^\s*\:\-+\s*$`),
		right:  regexp.MustCompile(`^\s*\-+\:\s*$`),
		center: regexp.MustCompile(`^\s*\:\-+\:\s*$`),
		none:   regexp.MustCompile(`^\s*\-+\s*$`),
	}
})

type tableParagraphs struct{}

func isTableDelim(bs []byte) bool {
	if w, _ := util.IndentWidth(bs, 0); w > 3 {
		return false
	}
	allSep := true
	for _, b := range bs {
		if b != '-' {
			allSep = false
		}
		if !(util.IsSpace(b) || b == '-' || b == '|' || b == ':') {
			return false
		}
	}
	return !allSep
}

func (b tableParagraphs) Transform(node *gast.Paragraph, reader text.Reader, pc parser.Context) {
	ppos := node.Pos()
	lines := node.Lines()
	if lines.Len() < 2 {
		return
	}
	for i := 1; i < lines.Len(); i++ {
		alignments := b.parseDelimiter(lines.At(i), reader)
		if alignments == nil {
			continue
		}
		header := b.parseRow(lines.At(i-1), alignments, true, reader)
		if header == nil || len(alignments) != header.ChildCount() {
			return
		}
		table := east.NewTable()
		table.Alignments = alignments
		table.SetPos(ppos)
		table.AppendChild(table, east.NewTableHeader(header))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, b.parseRow(lines.At(j), alignments, false, reader))
		}
		node.Lines().SetSliced(0, i-1)
		node.Parent().InsertAfter(node.Parent(), node, table)
		if node.Lines().Len() == 0 {
			node.Parent().RemoveChild(node.Parent(), node)
		} else {
			last := node.Lines().At(i - 2)
			last.Stop = last.Stop - 1 // trim last newline(\n)
			node.Lines().Set(i-2, last)
		}
	}
}

func (b tableParagraphs) parseRow(segment text.Segment, alignments []east.Alignment, isHeader bool, reader text.Reader) *east.TableRow {
	npos := segment
	source := reader.Source()
	segment = segment.TrimLeftSpace(source)
	segment = segment.TrimRightSpace(source)
	line := segment.Value(source)
	pos := 0
	limit := len(line)
	row := east.NewTableRow(alignments)
	row.SetPos(npos.Start)
	if len(line) > 0 && line[pos] == '|' {
		pos++
	}
	if len(line) > 0 && line[limit-1] == '|' {
		limit--
	}
	i := 0
	for ; pos < limit; i++ {
		alignment := east.AlignNone
		if i >= len(alignments) {
			if !isHeader {
				return row
			}
		} else {
			alignment = alignments[i]
		}
		node := east.NewTableCell()
		node.SetPos(npos.Start + pos - npos.Padding)
		node.Alignment = alignment
		closure := pos
		for ; closure < limit; closure++ {
			if line[closure] == '|' && (closure == 0 || line[closure-1] != '\\') {
				break
			}
		}
		seg := text.NewSegment(segment.Start+pos, segment.Start+closure)
		seg = seg.TrimLeftSpace(source)
		seg = seg.TrimRightSpace(source)
		node.Lines().Append(seg)
		row.AppendChild(row, node)
		pos = closure + 1
	}
	for ; i < len(alignments); i++ {
		row.AppendChild(row, east.NewTableCell())
	}
	return row
}

func (b tableParagraphs) parseDelimiter(segment text.Segment, reader text.Reader) []east.Alignment {
	line := segment.Value(reader.Source())
	if !isTableDelim(line) {
		return nil
	}
	cols := bytes.Split(line, []byte{'|'})
	if util.IsBlank(cols[0]) {
		cols = cols[1:]
	}
	if len(cols) > 0 && util.IsBlank(cols[len(cols)-1]) {
		cols = cols[:len(cols)-1]
	}
	d := tableDelimiters()
	var alignments []east.Alignment
	for _, col := range cols {
		switch {
		case d.left.Match(col):
			alignments = append(alignments, east.AlignLeft)
		case d.right.Match(col):
			alignments = append(alignments, east.AlignRight)
		case d.center.Match(col):
			alignments = append(alignments, east.AlignCenter)
		case d.none.Match(col):
			alignments = append(alignments, east.AlignNone)
		default:
			return nil
		}
	}
	return alignments
}
