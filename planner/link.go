package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// Target is one document for the Planner to serve.
type Target struct {
	Document string // its id or Chopin URL, as the person gave it
	Token    string // the agent token; never logged
	// Endpoint returns the agent connection's URL (ws(s)://…/api/v1/agent).
	// It is asked before every attempt: a Chopin that restarted may serve
	// on another port.
	Endpoint func() (string, error)
}

// AttachError is why a document's link cannot be, or stay, attached, in the
// person's words.
type AttachError struct {
	Document string
	Message  string
	// Retry is set when trying again may help: Chopin could not decide,
	// or could not be reached.
	Retry bool
	Err   error
}

func (e *AttachError) Error() string { return e.Message }
func (e *AttachError) Unwrap() error { return e.Err }

// Serve attaches to tgt's document and serves its turns until ctx ends,
// when it detaches and returns nil. A link that drops unexpectedly is
// attached again, after a backoff (at once after a restart, close 1012); a
// refusal ends Serve with an *AttachError, except unavailable, which is
// tried again. Before the first attach, a Chopin that cannot be reached is
// an error too: the person has just asked for it.
func (p *Planner) Serve(ctx context.Context, tgt Target) error {
	attachedOnce := false
	failures := 0
	// held is what the last link kept for the next one's resume
	// (resumable-sessions); nil after a detach, a final refusal, or before
	// the first attach.
	var held *client.Resumption
	for {
		if ctx.Err() != nil {
			return nil
		}
		endpoint, err := tgt.Endpoint()
		if err != nil {
			if !attachedOnce {
				return err
			}
			failures++
			wait := client.RetryDelay(held, false, 0, p.wait(failures))
			p.notify(fmt.Sprintf("%s: %v Trying again in %s.", tgt.Document, err, wait))
			if !client.Sleep(ctx, wait) {
				return nil
			}
			continue
		}
		link, err := client.Dial(ctx, client.Config{
			URL:      endpoint,
			Token:    tgt.Token,
			Document: tgt.Document,
			Features: p.features(),
			Handler:  p.Handler(),
			Logger:   p.log,
			Resume:   held,
		})
		if ctx.Err() != nil {
			if link != nil {
				_ = link.Close()
			}
			return nil
		}
		if err != nil {
			ae := attachError(endpoint, tgt.Document, err)
			if !ae.Retry || (!attachedOnce && errors.As(ae, new(*networkError))) {
				if held != nil {
					held.Abandon(p.Handler(), ae.Message)
				}
				return ae
			}
			failures++
			wait := client.RetryDelay(held, false, 0, p.wait(failures))
			p.notify(fmt.Sprintf("%s Trying again in %s.", ae.Message, wait))
			if !client.Sleep(ctx, wait) {
				return nil
			}
			continue
		}
		doc := link.Attached().Document
		name := doc.URL
		if name == "" {
			name = doc.ID
		}
		again := ""
		if attachedOnce {
			again = " again"
		}
		p.notify(fmt.Sprintf("Attached%s to %q (%s) as its Planner.", again, doc.Title, name))
		p.log.Info("attached", "channel", doc.ID, "features", link.Attached().Features)
		attachedOnce, failures, held = true, 0, nil
		p.links.add(link, &linkState{api: httpOrigin(endpoint), token: tgt.Token})
		p.afterAttach(ctx, link)

		select {
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := link.Detach(dctx)
			cancel()
			if err != nil {
				p.log.Warn("detach", "channel", doc.ID, "err", err)
			}
			p.links.remove(link)
			p.notify(fmt.Sprintf("Detached from %q.", doc.Title))
			return nil
		case <-link.Done():
		}
		p.links.remove(link)
		ce := link.Err()
		switch {
		case ce == nil:
		case ce.Refused != nil && ce.Refused.Code != "unavailable":
			return &AttachError{Document: tgt.Document, Message: refusalText(tgt.Document, ce.Refused.Code, ce.Refused.Message), Err: ce}
		case ce.Protocol != nil:
			// A message this Planner sent broke the protocol: a bug here,
			// not the person's doing. Say so, and attach again.
			p.log.Error("Chopin closed the link for a protocol error", "channel", doc.ID, "code", ce.Protocol.Code, "err", ce.Protocol.Message)
		}
		held = link.Resumption()
		wait := time.Duration(0)
		if ce == nil || ce.Code != 1012 { // 1012: Chopin restarts; come back at once
			failures++
			wait = p.wait(failures)
		}
		p.notify(fmt.Sprintf("The link to %q dropped (%s); attaching again in %s.", doc.Title, closeText(ce), wait))
		if !client.Sleep(ctx, wait) {
			return nil
		}
	}
}

// features are the optional features this Planner implements: what it asks
// for in Chopin-Agent-Features. It uses a feature only once attached.features
// grants it. See features.go.
func (p *Planner) features() []string {
	if len(implemented) == 0 {
		return nil // no header: attached then carries no features
	}
	return implemented
}

func (p *Planner) wait(failures int) time.Duration {
	if p.backoff != nil {
		return p.backoff(failures)
	}
	return client.Backoff(failures)
}

// networkError is a Chopin that did not answer the upgrade at all.
type networkError struct{ err error }

func (e *networkError) Error() string { return e.err.Error() }
func (e *networkError) Unwrap() error { return e.err }

// attachError words a failed Dial.
func attachError(endpoint, document string, err error) *AttachError {
	origin := originOf(endpoint)
	var he *client.HTTPError
	var rf *client.Refusal
	switch {
	case errors.As(err, &he):
		msg := serverMessage(he.Body)
		ae := &AttachError{Document: document, Err: err}
		switch he.Status {
		case http.StatusUnauthorized:
			ae.Message = fmt.Sprintf("Chopin at %s did not accept the agent token (HTTP 401). Run \"chopin token\" where Chopin runs to print the current one.", origin)
		case http.StatusNotFound:
			ae.Message = fmt.Sprintf("Chopin at %s does not offer the agent connection (HTTP 404): it runs with AGENT=off, or this is not a Chopin server.", origin)
		case http.StatusUpgradeRequired:
			ae.Message = fmt.Sprintf("The server at %s does not speak the agent connection chopin.agent.v1 (HTTP 426).", origin)
		case http.StatusServiceUnavailable:
			ae.Message, ae.Retry = fmt.Sprintf("Chopin at %s could not check the agent token just now (HTTP 503).", origin), true
		default:
			ae.Message = fmt.Sprintf("Chopin at %s refused the agent connection (HTTP %d)", origin, he.Status)
			if msg != "" {
				ae.Message += ": " + strings.TrimRight(msg, ".")
			}
			ae.Message += "."
		}
		return ae
	case errors.As(err, &rf):
		retry := rf.Code == "unavailable"
		return &AttachError{Document: document, Message: refusalText(document, rf.Code, rf.Message), Retry: retry, Err: err}
	}
	reason := netReason(err)
	return &AttachError{Document: document, Retry: true, Err: &networkError{err},
		Message: fmt.Sprintf("Could not reach Chopin at %s: %s. Is Chopin running? Start it with \"chopin\".", origin, reason)}
}

// refusalWords explain each refusal code of the spec's table.
var refusalWords = map[string]string{
	"unsupported-version":  "Chopin speaks another version of the agent connection than this chopin planner. Use a chopin planner from the same release as that Chopin.",
	"repository-forbidden": "The account of this agent token cannot push to or administer the document's repository, so it cannot be the document's Planner.",
	"sign-in-required":     "The account of this agent token is not signed in to Chopin in a browser. Sign in (run \"chopin open\"), then run this again.",
	"planner-attached":     "Another agent is already this document's Planner, and a document has one at a time. Stop it, or wait until its hold on the document ends, then run this again.",
	"document-unavailable": "No document matches this id or URL, or it is being deleted. Copy the document's address from Chopin and try again.",
	"document-archived":    "The document is archived. Restore it in Chopin, then run this again.",
	"access-revoked":       "Chopin let this Planner go: the document was archived or deleted, its Planner was reset, or the agent token was replaced. Run this again to attach anew.",
	"unavailable":          "Chopin could not check the document or the account just now.",
}

func refusalText(document, code, message string) string {
	words, ok := refusalWords[code]
	if !ok {
		words = fmt.Sprintf("Chopin refused to attach (%s).", code)
	}
	text := document + ": " + words
	if message != "" && message != specWording[code] {
		text += " Chopin said: " + message
	}
	return text
}

// specWording is the spec's fixed message of a refusal code, which says
// no more than refusalWords: it is not repeated after them.
var specWording = map[string]string{
	"document-unavailable": wire.MsgDocumentUnavailable,
	"document-archived":    wire.MsgDocumentArchived,
	"unavailable":          wire.MsgUnavailable,
}

func closeText(ce *client.CloseError) string {
	switch {
	case ce == nil:
		return "closed"
	case ce.Code == 1006:
		return "the connection was lost"
	case ce.Code == 1001:
		return "Chopin heard nothing from this Planner in time"
	case ce.Code == 1012:
		return "Chopin is restarting"
	case ce.Refused != nil:
		return ce.Refused.Message
	case ce.Protocol != nil:
		return "Chopin refused a message from this Planner: " + ce.Protocol.Message
	}
	if ce.Reason != "" {
		return fmt.Sprintf("close %d, %s", ce.Code, ce.Reason)
	}
	return fmt.Sprintf("close %d", ce.Code)
}

// serverMessage reads Chopin's {code, message} error body.
func serverMessage(body string) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(body), &e) == nil {
		return e.Message
	}
	return ""
}

// originOf is the http(s) origin an agent endpoint belongs to, as a person
// would type it.
func originOf(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return endpoint
	}
	scheme := strings.Replace(strings.Replace(u.Scheme, "wss", "https", 1), "ws", "http", 1)
	return scheme + "://" + u.Host
}
