package planner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// The optional features the Planner implements (features.go lists them):
// the capability catalog, attachments and steers.

// thinkingLevels are the levels offered when the model server takes
// reasoning_effort, as a person said it does with --reasoning-effort.
var thinkingLevels = []string{"low", "medium", "high"}

// levels are the catalog's thinking levels: none unless the person gave a
// reasoning effort, which shows the server takes one.
func (p *Planner) levels() []string {
	if p.effort == "" {
		return nil
	}
	if slices.Contains(thinkingLevels, p.effort) {
		return thinkingLevels
	}
	return append(slices.Clone(thinkingLevels), p.effort)
}

// catalog is the Planner's catalog: the model server's models (or only the
// default model when the server does not list them), with image among the
// inputTypes of a model that reads images when images is set.
func (p *Planner) catalog(ctx context.Context, images bool) Catalog {
	models, err := p.server.Models(ctx)
	if err != nil {
		var se *StatusError
		if !errors.As(err, &se) || se.Status != http.StatusNotFound {
			p.log.Warn("the model server's models could not be listed for the catalog", "err", err)
		}
		models = nil
	}
	if p.model != "" && !slices.ContainsFunc(models, func(m Model) bool { return m.ID == p.model }) {
		models = append(models, Model{ID: p.model})
	}
	c := BuildCatalog(models, p.levels(), p.model, p.effort)
	if images {
		for i, m := range c.Models.Available {
			if p.readsImages(models, m.ID) {
				c.Models.Available[i].InputTypes = []string{"text", "image"}
			}
		}
	}
	return c
}

// readsImages reports whether the model reads images: the person named it
// with --image-models, or the model server lists image among its inputs.
func (p *Planner) readsImages(models []Model, id string) bool {
	if slices.Contains(p.imageModels, id) {
		return true
	}
	for _, m := range models {
		if m.ID != id {
			continue
		}
		in := m.InputModalities
		if m.Architecture != nil {
			in = append(in, m.Architecture.InputModalities...)
		}
		if slices.Contains(in, "image") {
			return true
		}
	}
	return false
}

// reportCatalog sends the catalog when the link grants capability-catalog.
func (p *Planner) reportCatalog(ctx context.Context, link *client.Link) {
	if !link.Has(wire.FeatureCapabilityCatalog) {
		return
	}
	cat := p.catalog(ctx, link.Has(wire.FeatureAttachments))
	st := p.links.get(link)
	if st != nil {
		if tc := p.checkoutFor(ctx, link); tc != nil {
			cat.Checkout = &CatalogCheckout{Path: tc.c.Root(), Branch: tc.info.Branch, Head: tc.info.Head, Git: tc.c.GitFound()}
		}
		st.mu.Lock()
		defer st.mu.Unlock()
	}
	if err := link.ReportCapabilities(cat); err != nil {
		p.log.Warn("capabilities", "err", err)
		return
	}
	if st != nil {
		st.catalog, st.reported = &cat, cat.Checkout
	}
}

// ContentPart is one part of a user message's content: text, or an image
// as a data URL.
type ContentPart struct {
	Type     string    `json:"type"` // text or image_url
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is an image part's image.
type ImageURL struct {
	URL string `json:"url"`
}

// MarshalJSON sends Parts as the content when set.
func (m ChatMessage) MarshalJSON() ([]byte, error) {
	type plain ChatMessage
	if m.Parts == nil {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		Content []ContentPart `json:"content"`
	}{plain(m), m.Parts})
}

// userMessage is the turn's prompt with its attachments: each image as an
// image_url part with a data URL, each text file as a text part in a
// <file name="..."> block, in the order the person sent them.
func userMessage(t *client.Turn) ChatMessage {
	m := t.Message
	msg := ChatMessage{Role: "user", Content: m.Prompt}
	if len(m.Attachments) == 0 {
		return msg
	}
	msg.Parts = []ContentPart{{Type: "text", Text: m.Prompt}}
	for _, a := range m.Attachments {
		switch a.Kind {
		case "image":
			msg.Parts = append(msg.Parts, ContentPart{Type: "image_url", ImageURL: &ImageURL{URL: "data:" + a.MediaType + ";base64," + a.Data}})
		default:
			text, err := base64.StdEncoding.DecodeString(a.Data)
			if err != nil {
				text = []byte("(the file could not be read)")
			}
			msg.Parts = append(msg.Parts, ContentPart{Type: "text", Text: fmt.Sprintf("<file name=%q>\n%s\n</file>", a.Name, strings.TrimSuffix(string(text), "\n"))})
		}
	}
	return msg
}

// steers holds each running turn's steers until its next round.
type steers struct {
	mu    sync.Mutex
	turns map[*client.Turn]*steerQueue
}

type steerQueue struct {
	prompts []string
	closed  bool // the turn is ending: no steer is taken any more
}

func (s *steers) open(t *client.Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turns == nil {
		s.turns = map[*client.Turn]*steerQueue{}
	}
	s.turns[t] = &steerQueue{}
}

// take hands a steer to the turn: false when it has ended.
func (s *steers) take(t *client.Turn, prompt string) (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.turns[t]
	if q == nil || q.closed {
		return false, "The turn has ended."
	}
	q.prompts = append(q.prompts, prompt)
	return true, ""
}

// next returns the steers taken since the last call. With last set it also
// closes the turn to steers when there are none, so a steer is never taken
// after the turn has read its last one.
func (s *steers) next(t *client.Turn, last bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.turns[t]
	if q == nil {
		return nil
	}
	p := q.prompts
	q.prompts = nil
	if last && len(p) == 0 {
		q.closed = true
	}
	return p
}

func (s *steers) close(t *client.Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.turns, t)
}
