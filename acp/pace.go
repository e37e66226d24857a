package acp

// Back-pressure on the agent's output. acp-go-sdk reads the agent's stdout
// on one goroutine and queues each notification for another, and closes the
// connection when more than 1,024 are queued: an agent that streams a burst
// of message chunks faster than they are handled would lose its connection
// mid-turn. pacedReader hands the SDK one line at a time and holds a
// session/update back while maxInFlight of them wait to be handled, so the
// burst waits in the pipe instead (the agent's writes block).

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// maxInFlight is how many session/update notifications may wait in the
// SDK's queue; well under its 1,024.
const maxInFlight = 512

// maxLine is the longest line the SDK reads (its scanner's buffer); a longer
// one is handed on as it is, for the SDK to refuse.
const maxLine = 10 << 20

// stallLimit is how long the reader waits without any update being handled
// before it stops counting: an update the SDK dropped without calling
// SessionUpdate (one it could not decode) must not hold the agent for ever.
const stallLimit = time.Second

type pacedReader struct {
	r    *bufio.Reader
	line []byte // what is left of the line being handed out

	mu              sync.Mutex
	passed, handled uint64 // session/update notifications
}

func newPacedReader(r io.Reader) *pacedReader {
	return &pacedReader{r: bufio.NewReaderSize(r, 64<<10)}
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if len(p.line) == 0 {
		line, err := p.readLine()
		if len(line) == 0 {
			return 0, err
		}
		if isUpdate(line) {
			p.wait()
		}
		p.line = line
	}
	n := copy(b, p.line)
	p.line = p.line[n:]
	return n, nil
}

// readLine reads one line with its newline, at most maxLine bytes of it.
func (p *pacedReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := p.r.ReadSlice('\n')
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull || len(line) > maxLine {
			return line, err
		}
	}
}

// isUpdate reports whether a line is a session/update notification.
func isUpdate(line []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(line, &m) == nil && m.ID == nil && m.Method == "session/update"
}

// wait holds the line back while too many updates wait, then counts it.
func (p *pacedReader) wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, since := p.handled, time.Now()
	for p.passed-p.handled >= maxInFlight {
		if p.handled != last {
			last, since = p.handled, time.Now()
		} else if time.Since(since) > stallLimit {
			p.passed = p.handled
			break
		}
		p.mu.Unlock()
		time.Sleep(200 * time.Microsecond)
		p.mu.Lock()
	}
	p.passed++
}

// done counts an update handled.
func (p *pacedReader) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.handled++
	p.mu.Unlock()
}
