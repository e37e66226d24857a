package wire

import (
	"errors"
	"fmt"
)

// The messages of resumable-sessions and restart-notice
// (spec/agent-connection.md, "Resuming after a dropped link", "When the
// server is restarting").

// ResumeSessions is the client's resume (wire type "resume"): the sessions it
// still holds from a dropped link, each with the input-request ids it still
// waits on. It shares its wire type with the server's Resume (Resume
// Planner); each direction has its own registry.
type ResumeSessions struct {
	Sessions []ResumedSession `json:"sessions"`
}

// ResumedSession is one session of resume or resumed.
type ResumedSession struct {
	Session  string   `json:"session"`
	Requests []string `json:"requests"`
}

// Resumed answers resume: the sessions the server kept and gave back, each
// with the requests it still holds, open or answered while the link was down.
type Resumed struct {
	Sessions []ResumedSession `json:"sessions"`
}

// InputReceived acknowledges an input-result (resumable-sessions).
type InputReceived struct {
	Request string `json:"request"`
}

// Restarting precedes a close with 1012 (restart-notice).
type Restarting struct {
	ReconnectWithinMs int64 `json:"reconnectWithinMs"`
}

func (ResumeSessions) MessageType() string { return "resume" }
func (Resumed) MessageType() string        { return "resumed" }
func (InputReceived) MessageType() string  { return "input-received" }
func (Restarting) MessageType() string     { return "restarting" }

// maxResumedSessions bounds resume: more sessions than a link could ever
// hold open at once is not a resume.
const maxResumedSessions = 1024

func (m *ResumeSessions) validate() error {
	if len(m.Sessions) > maxResumedSessions {
		return fmt.Errorf("sessions lists %d sessions; at most %d", len(m.Sessions), maxResumedSessions)
	}
	var errs []error
	for i, s := range m.Sessions {
		errs = append(errs, checkID(fmt.Sprintf("sessions[%d].session", i), s.Session),
			checkIDs(fmt.Sprintf("sessions[%d].requests", i), s.Requests, MaxOpenRequests))
	}
	return errors.Join(errs...)
}

func (m *InputReceived) validate() error { return checkID("request", m.Request) }
