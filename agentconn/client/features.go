package client

import (
	"encoding/json"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// ReportCapabilities sends the client's catalog (capability-catalog); each
// report replaces the last. catalog is sent as it is, so a test can send
// any shape.
func (l *Link) ReportCapabilities(catalog any) error {
	raw, ok := catalog.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(catalog)
		if err != nil {
			return err
		}
		raw = b
	}
	return l.Send(wire.Capabilities{Catalog: raw})
}

// steer answers a steer with the Handler's Steer.
func (l *Link) steer(m wire.Steer) {
	t := l.currentTurn(m.Session, m.Turn)
	go func() {
		ok, msg := false, "This client cannot hand a message to a running turn."
		switch {
		case t == nil:
			msg = "The turn has ended."
		case l.cfg.Handler.Steer != nil:
			ok, msg = l.cfg.Handler.Steer(t, m.Prompt)
		}
		if ok {
			msg = ""
		}
		_ = l.Send(wire.ControlResult{Request: m.Request, OK: ok, Message: cut(msg)})
	}()
}
