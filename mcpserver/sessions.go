package mcpserver

// At most SessionCap MCP sessions live at once. A client that initializes
// and never sends DELETE leaves its session behind for sessionIdle; before
// a new session is made past the cap, the one idle longest ends (a session
// answering a request is never ended). A client whose session ended gets
// -32001 and initializes again, as after a restart of Chopin.

import (
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SessionCap is how many MCP sessions live at once: far more than the
// agents one person runs side by side, and few enough that the sessions
// clients never end cost well under a megabyte.
const SessionCap = 64

// sessionUse is when each session was last used, and how many of its
// requests are being answered.
type sessionUse struct {
	server *mcp.Server // set at construction

	mu  sync.Mutex // guards use
	use map[string]*sessionUsage
}

type sessionUsage struct {
	last time.Time
	busy int
}

// opened records a session its initialize made.
func (u *sessionUse) opened(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.use == nil {
		u.use = map[string]*sessionUsage{}
	}
	u.use[id] = &sessionUsage{last: time.Now()}
}

// begin marks a request of session id as being answered, until the
// function it returns is called.
func (u *sessionUse) begin(id string) (done func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := u.use[id]
	if s == nil {
		return func() {} // ended, or never made: the SDK answers 404
	}
	s.busy++
	s.last = time.Now()
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		s.busy--
		s.last = time.Now()
	}
}

// makeRoom ends the sessions idle longest until fewer than SessionCap
// live. It reports false when every session is answering a request.
func (u *sessionUse) makeRoom(log *slog.Logger) bool {
	for {
		var live []*mcp.ServerSession
		for ss := range u.server.Sessions() {
			live = append(live, ss)
		}
		if len(live) < SessionCap {
			return true
		}
		oldest := u.idleLongest(live)
		if oldest == nil {
			return false
		}
		log.Info("MCP sessions at their cap: ending the one idle longest", "session", oldest.ID(), "cap", SessionCap)
		oldest.Close() // the SDK forgets it; its requests get 404 from now on
	}
}

// idleLongest is the live session used longest ago that is not answering
// a request, and forgets the sessions that are no longer live. A live
// session not recorded yet is one whose initialize is still being
// answered: it is busy.
func (u *sessionUse) idleLongest(live []*mcp.ServerSession) *mcp.ServerSession {
	u.mu.Lock()
	defer u.mu.Unlock()
	isLive := make(map[string]bool, len(live))
	var oldest *mcp.ServerSession
	var at time.Time
	for _, ss := range live {
		id := ss.ID()
		isLive[id] = true
		s := u.use[id]
		if s == nil || s.busy > 0 {
			continue
		}
		if oldest == nil || s.last.Before(at) {
			oldest, at = ss, s.last
		}
	}
	for id := range u.use {
		if !isLive[id] {
			delete(u.use, id)
		}
	}
	if oldest != nil {
		delete(u.use, oldest.ID())
	}
	return oldest
}

// LiveSessions is how many MCP sessions live now.
func (s *Server) LiveSessions() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}
