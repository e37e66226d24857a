package agentconn

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// ServeHTTP serves GET /api/v1/agent. It refuses over HTTP before upgrading,
// in the spec's order, so nothing opens for a request that cannot attach.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Disabled {
		httpError(w, http.StatusNotFound, "not-found", "The agent connection is off on this server.")
		return
	}
	if !offers(r, wire.Subprotocol) || !websocket.IsWebSocketUpgrade(r) || r.Method != http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Upgrade", "websocket")
		w.WriteHeader(http.StatusUpgradeRequired)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": "subprotocol-required", "supported": []string{wire.Subprotocol}})
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !s.sameOrigin(origin, r) {
		httpError(w, http.StatusForbidden, "forbidden-origin", "Agent connections may not come from another origin. An agent client sends no Origin header.")
		return
	}
	bearer, ok := bearerToken(r)
	if !ok {
		httpError(w, http.StatusUnauthorized, "unauthorized", "Send Authorization: Bearer <agent token>. Run `chopin token` to print it.")
		return
	}
	var account Account
	var err error
	if strings.HasPrefix(bearer, "chopin_p_") {
		// Paired machines' Planner credentials are not offered in local mode.
		err = ErrUnauthorized
	} else {
		account, err = s.host.Authenticate(r.Context(), bearer)
	}
	switch {
	case errors.Is(err, ErrUnauthorized):
		httpError(w, http.StatusUnauthorized, "unauthorized", "The agent token is not valid. Run `chopin token` to print the current one.")
		return
	case errors.Is(err, ErrUnavailable):
		httpError(w, http.StatusServiceUnavailable, "unavailable", "Chopin could not check the token just now. Try again later.")
		return
	case err != nil:
		s.log.Error("agent connection admission failed", "err", err)
		httpError(w, http.StatusInternalServerError, "internal", "Chopin could not admit the connection.")
		return
	}
	requested, features := wire.ParseFeaturesHeader(r.Header.Values(wire.FeaturesHeader))
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	l := newLink(s, conn, account, sha256.Sum256([]byte(bearer)), wire.GrantFeatures(requested, features))
	if !s.addLink(l) {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(wire.CloseRestarting, "restarting"), time.Now().Add(time.Second))
		_ = conn.Close()
		return
	}
	go l.serve()
}

func httpError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": message})
}

// offers reports whether the upgrade offers protocol among its subprotocols.
func offers(r *http.Request, protocol string) bool {
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(h, ",") {
			if strings.TrimSpace(p) == protocol {
				return true
			}
		}
	}
	return false
}

func (s *Server) sameOrigin(origin string, r *http.Request) bool {
	if s.opts.Origin != "" {
		return strings.EqualFold(strings.TrimSuffix(origin, "/"), strings.TrimSuffix(s.opts.Origin, "/"))
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// bearerToken reads "Authorization: Bearer <token>"; a token is token68.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > 4096 {
		return "", false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", c) >= 0) {
			return "", false
		}
	}
	return token, true
}

// attach answers the client's attach: checks the version, the document, the
// account's access and the ownership, in that order.
func (l *link) attach(ctx context.Context, m wire.Attach) {
	if m.Version != wire.ProtocolVersion {
		l.refuse(wire.Refused{Code: wire.CodeUnsupportedVersion, Message: wire.MsgUnsupportedVersion(m.Version)})
		return
	}
	doc, err := l.srv.host.Document(ctx, m.Document)
	switch {
	case errors.Is(err, ErrDocumentNotFound):
		l.refuse(wire.Refused{Code: wire.CodeDocumentUnavailable, Message: wire.MsgDocumentUnavailable})
		return
	case err != nil:
		l.log.Warn("attach: document check failed", "err", err)
		l.refuse(wire.Refused{Code: wire.CodeUnavailable, Message: wire.MsgUnavailable, Retry: true})
		return
	case doc.Archived:
		l.refuse(wire.Refused{Code: wire.CodeDocumentArchived, Message: wire.MsgDocumentArchived})
		return
	}
	switch err := l.srv.host.Access(ctx, l.account, doc); {
	case errors.Is(err, ErrForbidden):
		l.refuse(wire.Refused{Code: wire.CodeRepositoryForbidden, Message: wire.MsgRepositoryForbidden(l.account.Login, doc.Repository)})
		return
	case err != nil:
		l.log.Warn("attach: access check failed", "err", err)
		l.refuse(wire.Refused{Code: wire.CodeUnavailable, Message: wire.MsgUnavailable, Retry: true})
		return
	}
	l.mu.Lock()
	l.doc = doc
	l.mu.Unlock()
	if refusal := l.srv.claim(l, doc); refusal != nil {
		l.refuse(*refusal)
		return
	}
	l.mu.Lock()
	if l.state == stateClosed { // revoked while attaching; close has released the claim
		l.mu.Unlock()
		return
	}
	l.state = stateAttached
	l.since = l.srv.opts.Clock()
	l.recheckTimer = time.AfterFunc(l.srv.opts.Recheck, l.periodicRecheck)
	l.send(wire.Attached{
		Version:  wire.ProtocolVersion,
		Document: wire.AttachedDocument{ID: doc.ID, Title: doc.Title, Repository: doc.Repository, URL: doc.URL},
		Features: l.features,
	})
	l.mu.Unlock()
	l.log.Info("planner attached", "channel", doc.ID, "login", l.account.Login, "features", l.features)
	if l.afterAttach() { // resume.go: an unconfirmed link shows nothing yet
		return
	}
	l.srv.host.PlannerChanged(doc.ID, l.status())
}

func (l *link) refuse(r wire.Refused) {
	l.close(closing{code: wire.RefusalCloseCode(r.Code), reason: r.Code, msg: r})
}
