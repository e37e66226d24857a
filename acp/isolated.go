package acp

// Isolated sessions: a background job's session (start with mode isolated,
// such as a generated description) gets an ACP session of its own, opened
// with session/new in the document's working directory and no MCP servers,
// so the job's prompts never enter the document's Planner session and the
// agent has none of Chopin's host tools there. Its turns declare no own
// tools, stream text and reasoning only, and a permission request in it is
// answered cancelled (an isolated session gets no Decisions). When Chopin
// destroys the session, the bridge closes it with session/close when the
// agent offers that, else just forgets it.

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// maxIsolatedSessions bounds the isolated sessions the bridge keeps; Chopin
// destroys each after its turn, so more means sessions a dropped link left
// behind, and the idle ones are let go.
const maxIsolatedSessions = 16

// closeTimeout bounds the wait for session/close's answer.
const closeTimeout = 10 * time.Second

// isolatedSession is the ACP session of one of Chopin's isolated sessions.
// Its fields are guarded by the document's mu.
type isolatedSession struct {
	proc          *process
	id            sdk.SessionId
	model, option string     // its current model, and the config option that sets it
	turn          *turnState // the running turn
}

// runIsolated runs an isolated session's turn as a prompt in that session's
// own ACP session.
func (d *document) runIsolated(ctx context.Context, t *client.Turn) error {
	log := d.logger().With("session", t.Session.ID, "turn", t.ID())
	p, err := d.ensureProcess(ctx)
	if err != nil {
		return err
	}
	is, err := d.isolatedSessionFor(ctx, p, t.Session.ID)
	if err != nil {
		return err
	}
	d.mu.Lock()
	model, option := is.model, is.option
	d.mu.Unlock()
	if m := t.Message.Model; m != "" && m != model {
		if err := switchModel(ctx, p, is.id, option, m); err != nil {
			return err
		}
		model = m
		d.mu.Lock()
		is.model = m
		d.mu.Unlock()
	}
	st := newTurnState(ctx, d, t, true)
	if err := st.send(wire.StreamPart{Type: wire.PartStreamStart, ModelID: model}); err != nil {
		st.end("failed")
		return err
	}
	d.mu.Lock()
	is.turn = st
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		if is.turn == st {
			is.turn = nil
		}
		d.mu.Unlock()
	}()
	log.Info("isolated prompt sent", "acpSession", is.id)
	return d.prompt(ctx, st, p, is.id, promptBlocks(t, p.init.AgentCapabilities.PromptCapabilities.Image))
}

// isolatedSessionFor returns the ACP session of Chopin's isolated session
// id on p, opening it with session/new (the document's working directory,
// no MCP servers) the first time.
func (d *document) isolatedSessionFor(ctx context.Context, p *process, id string) (*isolatedSession, error) {
	d.mu.Lock()
	if is := d.isolated[id]; is != nil && is.proc == p {
		d.mu.Unlock()
		return is, nil
	}
	d.mu.Unlock()
	cwd, err := d.workingDirectory(ctx)
	if err != nil {
		return nil, fmt.Errorf("The agent's working directory could not be made: %v", err)
	}
	r, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		if p.hasExited() {
			return nil, p.exitError("while opening a session")
		}
		return nil, fmt.Errorf("The agent %s could not open a session: %v", p.name, err)
	}
	is := &isolatedSession{proc: p, id: r.SessionId}
	is.model, is.option = sessionModel(r.Models, r.ConfigOptions)
	var idle []*isolatedSession
	d.mu.Lock()
	if d.isolated == nil {
		d.isolated = map[string]*isolatedSession{}
	}
	if len(d.isolated) >= maxIsolatedSessions {
		for k, old := range d.isolated {
			if old.turn == nil {
				idle = append(idle, old)
				delete(d.isolated, k)
			}
		}
	}
	d.isolated[id] = is
	d.mu.Unlock()
	for _, old := range idle {
		go d.closeIsolated(old)
	}
	d.logger().Info("isolated agent session opened", "session", id, "acpSession", r.SessionId)
	return is, nil
}

// isolatedByACP is the isolated session whose ACP session is id, or nil.
// Call with d.mu held.
func (d *document) isolatedByACP(id sdk.SessionId) *isolatedSession {
	for _, is := range d.isolated {
		if is.id == id {
			return is
		}
	}
	return nil
}

// destroyed is told that Chopin ended a session: an isolated one's ACP
// session is closed. The document's ACP session outlives Chopin's Planner
// sessions, which are one per turn.
func (d *document) destroyed(s *client.Session) {
	d.mu.Lock()
	is := d.isolated[s.ID]
	delete(d.isolated, s.ID)
	d.mu.Unlock()
	if is != nil {
		d.closeIsolated(is)
	}
}

// closeIsolated closes an isolated ACP session with session/close when the
// agent offers it (sessionCapabilities.close); an agent without it keeps
// the session as long as it likes, and the bridge forgets it.
func (d *document) closeIsolated(is *isolatedSession) {
	p := is.proc
	if p.hasExited() || p.init.AgentCapabilities.SessionCapabilities.Close == nil {
		d.logger().Debug("isolated agent session forgotten", "acpSession", is.id)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if _, err := p.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: is.id}); err != nil {
		d.logger().Warn("session/close of an isolated agent session", "acpSession", is.id, "err", err)
		return
	}
	d.logger().Debug("isolated agent session closed", "acpSession", is.id)
}
