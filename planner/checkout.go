package planner

// The Planner's own tools on the repository's local checkout (package
// checkout): which checkout a turn reads, learned from Chopin's HTTP API
// with the agent token at every turn (or --checkout), the tools declared
// with the spec's tools message and described in the system message, each
// call run here with its result masked (redact) before the model, or Chat,
// sees it, and the checkout reported in the capability catalog so the
// document shows what the Planner reads.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/checkout"
	"github.com/chopin-desktop/chopin/redact"
)

// CatalogCheckout is the checkout this Planner reads for the document, in
// its capability catalog (a field the spec keeps as written): Chopin shows
// it as "reads <path> @ <branch>", and says when Git was not found.
type CatalogCheckout struct {
	Path   string `json:"path"`
	Branch string `json:"branch,omitempty"`
	Head   string `json:"head,omitempty"`
	Git    bool   `json:"git"` // git was found on this computer
}

// linkState is what the Planner keeps of one attached link.
type linkState struct {
	api   string // Chopin's HTTP origin, for its API
	token string // the agent token; never logged

	mu       sync.Mutex
	catalog  *Catalog         // the last catalog reported, nil before the first
	reported *CatalogCheckout // the checkout in it
}

// links keeps each attached link's state.
type links struct {
	mu sync.Mutex
	m  map[*client.Link]*linkState
}

func (ls *links) add(l *client.Link, s *linkState) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[*client.Link]*linkState{}
	}
	ls.m[l] = s
}

func (ls *links) remove(l *client.Link) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.m, l)
}

func (ls *links) get(l *client.Link) *linkState {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.m[l]
}

// turnCheckout is the checkout a turn reads, opened, with what Git says
// of it.
type turnCheckout struct {
	c    *checkout.Checkout
	info checkout.Info
}

// apiTimeout bounds asking Chopin for the document's repository.
const apiTimeout = 10 * time.Second

// checkoutFor finds the checkout of the link's document: --checkout, else
// the repository's path from Chopin's HTTP API. nil when it has none, or
// it cannot be opened here (said in the log).
func (p *Planner) checkoutFor(ctx context.Context, link *client.Link) *turnCheckout {
	path := p.checkoutPath
	if path == "" {
		st := p.links.get(link)
		if st == nil {
			return nil
		}
		var err error
		if path, err = repositoryPath(ctx, p.chopinHTTP, st.api, st.token, link.Attached().Document.Repository); err != nil {
			if ctx.Err() == nil { // not a lookup cut short by the turn or the Planner ending
				p.log.Warn("the document's checkout could not be looked up", "channel", link.Attached().Document.ID, "err", err)
			}
			return nil
		}
	}
	if path == "" {
		return nil
	}
	c, err := checkout.Open(path)
	if err != nil {
		p.log.Warn("the document's checkout cannot be read", "channel", link.Attached().Document.ID, "err", err)
		return nil
	}
	ictx, cancel := context.WithTimeout(ctx, checkout.GitTimeout)
	defer cancel()
	return &turnCheckout{c: c, info: c.Info(ictx)}
}

// repositoryPath asks Chopin for repository's local checkout path ("" for
// none): GET /api/repositories/:owner/:repository with the agent token.
func repositoryPath(ctx context.Context, hc *http.Client, api, token, repository string) (string, error) {
	owner, name, ok := strings.Cut(repository, "/")
	if !ok {
		return "", fmt.Errorf("the document's repository %q is not owner/name", repository)
	}
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/api/repositories/"+url.PathEscape(owner)+"/"+url.PathEscape(name), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("Chopin answered %s", resp.Status)
	}
	var repo struct {
		Path string `json:"path"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&repo); err != nil {
		return "", err
	}
	return repo.Path, nil
}

// httpOrigin is the http(s) origin of an agent endpoint (ws(s)://…).
func httpOrigin(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := "http"
	if u.Scheme == "wss" || u.Scheme == "https" {
		scheme = "https"
	}
	return scheme + "://" + u.Host
}

// offerCheckout declares the checkout's tools for the turn, adds them to
// the request and its system message, and reports the checkout when it
// changed. It returns the names declared.
func (p *Planner) offerCheckout(t *client.Turn, tc *turnCheckout, req *ChatRequest) (map[string]bool, error) {
	p.reportCheckout(t.Session.Link(), tc)
	// An isolated session may declare no tools of its own (the spec), and
	// a turn that must answer JSON is a job's, not a plan's.
	if tc == nil || t.Session.Mode == wire.ModeIsolated || t.Message.ResponseFormat != nil && t.Message.ResponseFormat.Type == "json" {
		return nil, nil
	}
	host := map[string]bool{}
	for _, tool := range t.Message.Tools {
		host[tool.Name] = true
	}
	own := map[string]bool{}
	var names []string
	for _, tool := range tc.c.Offered() {
		if host[tool.Name] {
			continue // a host tool of the same name wins: the spec forbids declaring it
		}
		own[tool.Name] = true
		names = append(names, tool.Name)
		req.Tools = append(req.Tools, functionTool(tool.Name, tool.Description, tool.Schema))
	}
	if len(names) == 0 {
		return nil, nil
	}
	if err := t.DeclareTools(names...); err != nil {
		return nil, err
	}
	text := tc.c.Instructions(tc.info)
	if len(req.Messages) > 0 && req.Messages[0].Role == "system" {
		req.Messages[0].Content += "\n\n" + text
	} else {
		req.Messages = append([]ChatMessage{{Role: "system", Content: text}}, req.Messages...)
	}
	return own, nil
}

// runOwnTool runs one of the checkout's tools for the model: its tool-call
// and tool-result parts go to Chopin under the call's id, and the model
// reads the masked text, or one line starting "Error:".
func (p *Planner) runOwnTool(ctx context.Context, t *client.Turn, tc *turnCheckout, call roundCall) (string, error) {
	input := call.Function.Arguments
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	if err := t.Send(wire.StreamPart{Type: wire.PartToolCall, ToolCallID: call.ID, ToolName: call.Function.Name, Input: input, ProviderExecuted: true}); err != nil {
		return "", err
	}
	text, err := tc.c.Call(ctx, call.Function.Name, input)
	result := wire.StreamPart{Type: wire.PartToolResult, ToolCallID: call.ID, ToolName: call.Function.Name}
	var out string
	if err != nil {
		msg := redact.Text(err.Error())
		var ce *checkout.Error
		if !errors.As(err, &ce) {
			msg = redact.Text("The tool failed: " + err.Error())
		}
		te := wire.ToolError{Code: "tool-failed", Message: cutRunes(msg, wire.MaxNoteChars)}
		result.IsError = true
		result.Result, _ = te.Envelope()
		out = "Error: " + msg
	} else {
		out = redact.Text(text)
		result.Result, _ = json.Marshal(out)
	}
	if err := t.Send(result); err != nil {
		return "", err
	}
	return out, nil
}

// reportCheckout sends the link's catalog again when the checkout the
// Planner reads for its document changed (or went away).
func (p *Planner) reportCheckout(link *client.Link, tc *turnCheckout) {
	st := p.links.get(link)
	if st == nil || !link.Has(wire.FeatureCapabilityCatalog) {
		return
	}
	var now *CatalogCheckout
	if tc != nil {
		now = &CatalogCheckout{Path: tc.c.Root(), Branch: tc.info.Branch, Head: tc.info.Head, Git: tc.c.GitFound()}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.catalog == nil || equalCheckout(st.reported, now) {
		return
	}
	cat := *st.catalog
	cat.Checkout = now
	if err := link.ReportCapabilities(cat); err != nil {
		p.log.Warn("capabilities", "err", err)
		return
	}
	st.catalog, st.reported = &cat, now
}

func equalCheckout(a, b *CatalogCheckout) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
