package client

import (
	"errors"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// errCannotFork refuses a fork when the Handler has no Fork.
var errCannotFork = errors.New("This client cannot fork a session.")

// fork answers a fork (session-forks) with the Handler's Fork, exactly as
// start is answered: started, or start-failed with the error's text, on which
// the server falls back to start with the transcript.
func (l *Link) fork(m wire.Fork) {
	s := &Session{ID: m.Session, Mode: m.Mode, link: l, turns: map[string]*Turn{}}
	l.mu.Lock()
	l.sessions[s.ID] = s
	l.mu.Unlock()
	go func() {
		err := errCannotFork
		if h := l.cfg.Handler.Fork; h != nil {
			err = h(s, m.From)
		}
		if err != nil {
			l.forget(s.ID)
			_ = l.Send(wire.StartFailed{Session: s.ID, Message: cut(err.Error())})
			return
		}
		_ = l.Send(wire.Started{Session: s.ID})
	}()
}
