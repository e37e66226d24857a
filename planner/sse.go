package planner

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// readEvents reads server-sent events from r and calls on with each event's
// data: its data: lines joined with newlines, dispatched at a blank line or
// the end of the stream. Comments (":"), event:, id: and retry: lines carry
// nothing a completion needs and are skipped. on returns stop to end early.
// An event over limit bytes is an error.
func readEvents(r io.Reader, limit int, on func(data string) (stop bool, err error)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data strings.Builder
	has := false
	dispatch := func() (bool, error) {
		if !has {
			return false, nil
		}
		d := data.String()
		data.Reset()
		has = false
		return on(d)
	}
	for {
		line, err := readLine(br, limit)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		eof := errors.Is(err, io.EOF)
		if line == "" && !eof {
			if stop, err := dispatch(); stop || err != nil {
				return err
			}
			continue
		}
		if value, ok := field(line, "data"); ok {
			if has {
				data.WriteByte('\n')
			}
			if data.Len()+len(value) > limit {
				return errors.New("an event was too large")
			}
			data.WriteString(value)
			has = true
		}
		if eof {
			_, err := dispatch()
			return err
		}
	}
}

// field reads "name: value" (one optional space after the colon).
func field(line, name string) (string, bool) {
	rest, ok := strings.CutPrefix(line, name)
	if !ok {
		return "", false
	}
	if rest == "" {
		return "", true
	}
	rest, ok = strings.CutPrefix(rest, ":")
	if !ok {
		return "", false
	}
	return strings.TrimPrefix(rest, " "), true
}

// readLine reads one line without its ending (\n, \r\n or a lone \r is not
// treated as an ending: no model server sends one). At the end of the
// stream it returns what is left with io.EOF.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var b []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(b)+len(frag) > limit {
			return "", errors.New("a line was too large")
		}
		b = append(b, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if err != nil {
			return line, err
		}
		return line, nil
	}
}
