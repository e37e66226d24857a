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
)

// FeaturesHeader names the optional features a client wants.
const FeaturesHeader = "Chopin-Agent-Features"

// supportedFeatures are the features this server grants.
var supportedFeatures = []string{"run-stage-deltas", FeatureResumableSessions, FeatureRestartNotice, FeatureCapabilityCatalog, FeatureSteerTurn, FeatureRetryTurn, FeatureAttachments,
	"decision-option-previews", FeatureSessionForks}

const featureRunStageDeltas = "run-stage-deltas"

// ServeHTTP serves GET /api/v1/agent. It refuses over HTTP before upgrading,
// in the spec's order, so nothing opens for a request that cannot attach.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.opts.Disabled {
		httpError(w, http.StatusNotFound, "not-found", "The agent connection is off on this server.")
		return
	}
	if !offers(r, Subprotocol) || !websocket.IsWebSocketUpgrade(r) || r.Method != http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Upgrade", "websocket")
		w.WriteHeader(http.StatusUpgradeRequired)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": "subprotocol-required", "supported": []string{Subprotocol}})
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
	requested, features := parseFeatures(r.Header.Values(FeaturesHeader))
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	l := newLink(s, conn, account, sha256.Sum256([]byte(bearer)), grantFeatures(requested, features))
	if !s.addLink(l) {
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(closeRestarting, "restarting"), time.Now().Add(time.Second))
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

// parseFeatures reads Chopin-Agent-Features: whether it was sent, and the
// well-formed names in it. Names of another shape are ignored like unknown ones.
func parseFeatures(values []string) (sent bool, names []string) {
	for _, v := range values {
		sent = true
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); isIdentifier(n) {
				names = append(names, n)
			}
		}
	}
	return sent, names
}

// grantFeatures is what attached.features lists: nil without the header,
// else the requested names this server supports, possibly none.
func grantFeatures(sent bool, requested []string) []string {
	if !sent {
		return nil
	}
	granted := []string{}
	for _, f := range supportedFeatures {
		for _, r := range requested {
			if r == f && len(granted) < maxFeatures {
				granted = append(granted, f)
				break
			}
		}
	}
	return granted
}

// attach answers the client's attach: checks the version, the document, the
// account's access and the ownership, in that order.
func (l *link) attach(ctx context.Context, m Attach) {
	if m.Version != ProtocolVersion {
		l.refuse(Refused{Code: codeUnsupportedVersion, Message: msgUnsupportedVersion(m.Version)})
		return
	}
	doc, err := l.srv.host.Document(ctx, m.Document)
	switch {
	case errors.Is(err, ErrDocumentNotFound):
		l.refuse(Refused{Code: codeDocumentUnavailable, Message: msgDocumentUnavailable})
		return
	case err != nil:
		l.log.Warn("attach: document check failed", "err", err)
		l.refuse(Refused{Code: codeUnavailable, Message: msgUnavailable, Retry: true})
		return
	case doc.Archived:
		l.refuse(Refused{Code: codeDocumentArchived, Message: msgDocumentArchived})
		return
	}
	switch err := l.srv.host.Access(ctx, l.account, doc); {
	case errors.Is(err, ErrForbidden):
		l.refuse(Refused{Code: codeRepositoryForbidden, Message: msgRepositoryForbidden(l.account.Login, doc.Repository)})
		return
	case err != nil:
		l.log.Warn("attach: access check failed", "err", err)
		l.refuse(Refused{Code: codeUnavailable, Message: msgUnavailable, Retry: true})
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
	l.send(Attached{
		Version:  ProtocolVersion,
		Document: AttachedDocument{ID: doc.ID, Title: doc.Title, Repository: doc.Repository, URL: doc.URL},
		Features: l.features,
	})
	l.mu.Unlock()
	l.log.Info("planner attached", "document", doc.ID, "login", l.account.Login, "features", l.features)
	if l.afterAttach() { // resume.go: an unconfirmed link shows nothing yet
		return
	}
	l.srv.host.PlannerChanged(doc.ID, l.status())
}

func (l *link) refuse(r Refused) {
	l.close(closing{code: refusalClose[r.Code], reason: r.Code, msg: r})
}
