package checkout

// read_file: a text file's lines with their numbers, at most
// MaxResultBytes a result, continued with the exact call a next: line
// names, so paging returns every line exactly once.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ReadInput is read_file's input.
type ReadInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"` // the first line, 1-based
	Limit  int    `json:"limit,omitempty"`  // the most lines
	// Column continues a line too long for one result: the 1-based byte
	// in line Offset to start at.
	Column int `json:"column,omitempty"`
}

// binarySniff is how much of a file is checked for a NUL byte, as Git
// decides that a file is binary.
const binarySniff = 8000

// maxReadBytes is the largest file read_file reads: a line is read whole,
// and a file this size can be one line.
const maxReadBytes = 64 << 20

// ReadFile returns a header (file, size, the lines shown, next:) and the
// lines, each after its number and a tab.
func (c *Checkout) ReadFile(ctx context.Context, in ReadInput) (string, error) {
	if in.Path == "" {
		return "", refuse("read_file needs a path, such as README.md; list_files shows what there is.")
	}
	if in.Offset < 0 || in.Limit < 0 || in.Column < 0 {
		return "", refuse("offset, limit and column are whole numbers from 1.")
	}
	rel, abs, err := c.resolve(in.Path)
	if err != nil {
		return "", err
	}
	if rel == "" {
		return "", refuse("read_file reads a file; list_files lists the checkout's folders.")
	}
	f, st, err := openRegular(abs)
	switch {
	case errors.Is(err, ErrFolder):
		return "", refuse("%s is a folder; list its files with list_files {\"path\":%q}.", rel, rel)
	case errors.Is(err, ErrNotFile):
		return "", refuse("%s is not a regular file.", rel)
	case err != nil:
		return "", refuse("%s cannot be read: %s.", rel, shortErr(err))
	}
	defer f.Close()
	if st.Size() > maxReadBytes {
		return "", refuse("%s is %d bytes, more than read_file reads (%d MiB); search it with search_code instead.", rel, st.Size(), maxReadBytes>>20)
	}
	head := make([]byte, binarySniff)
	n, _ := io.ReadFull(f, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return fmt.Sprintf("file: %s\nsize: %d bytes\n%s is a binary file of %d bytes; read_file shows text only.", rel, st.Size(), rel, st.Size()), nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", refuse("%s cannot be read: %s.", rel, shortErr(err))
	}
	return readLines(ctx, f, rel, st.Size(), in)
}

// readLines pages through the file's lines from in.Offset.
func readLines(ctx context.Context, r io.Reader, rel string, size int64, in ReadInput) (string, error) {
	first := max(in.Offset, 1)
	column := max(in.Column, 1)
	br := bufio.NewReaderSize(r, 64<<10)
	lineNo := 0
	var body strings.Builder
	header := func(last int, next *ReadInput) string {
		var h strings.Builder
		fmt.Fprintf(&h, "file: %s\nsize: %d bytes\n", rel, size)
		switch {
		case last < first:
			fmt.Fprintf(&h, "lines: none from line %d (the file has %d)\n", first, lineNo)
		case column > 1:
			fmt.Fprintf(&h, "lines: %d (from byte %d) to %d\n", first, column, last)
		default:
			fmt.Fprintf(&h, "lines: %d to %d\n", first, last)
		}
		if next != nil {
			raw, _ := json.Marshal(next)
			fmt.Fprintf(&h, "next: read_file %s\n", raw)
		}
		return h.String()
	}
	// The header's own size is bounded (a path, a few numbers): keep room.
	budget := MaxResultBytes - 256 - 2*len(rel)
	last := first - 1
	for {
		if ctx.Err() != nil {
			return "", refuse("Reading %s was stopped.", rel)
		}
		line, err := readLine(br)
		if errors.Is(err, io.EOF) && line == nil {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", refuse("%s cannot be read: %s.", rel, shortErr(err))
		}
		lineNo++
		if lineNo < first {
			continue
		}
		text := line
		col := 1
		if lineNo == first && column > 1 {
			col = min(column, len(line)+1)
			text = line[col-1:]
		}
		prefix := fmt.Sprintf("%6d\t", lineNo)
		if in.Limit > 0 && lineNo-first >= in.Limit {
			return header(last, &ReadInput{Path: in.Path, Offset: lineNo, Limit: in.Limit}) + strings.TrimSuffix(body.String(), "\n"), nil
		}
		need := len(prefix) + len(text) + 1
		if body.Len()+need > budget {
			if body.Len() > 0 {
				return header(last, &ReadInput{Path: in.Path, Offset: lineNo, Limit: in.Limit}) + strings.TrimSuffix(body.String(), "\n"), nil
			}
			// One line longer than a result: show its start, continue at
			// the byte after (on a UTF-8 boundary).
			cut := max(budget-len(prefix)-1, 1)
			for cut > 1 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			body.WriteString(prefix)
			body.WriteString(strings.ToValidUTF8(string(text[:cut]), "\uFFFD"))
			body.WriteByte('\n')
			return header(lineNo, &ReadInput{Path: in.Path, Offset: lineNo, Column: col + cut, Limit: in.Limit}) + strings.TrimSuffix(body.String(), "\n"), nil
		}
		body.WriteString(prefix)
		body.WriteString(strings.ToValidUTF8(string(text), "\uFFFD"))
		body.WriteByte('\n')
		last = lineNo
		if errors.Is(err, io.EOF) {
			break
		}
	}
	return header(last, nil) + strings.TrimSuffix(body.String(), "\n"), nil
}

// readLine reads one line without its line end (\n or \r\n), of any length.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) == 0 && err != nil {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if line == nil {
			line = []byte{}
		}
		return line, err
	}
}
