package planner

import (
	"context"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// implemented are the optional features ("Features" in the spec) this
// Planner implements, as it asks for them in Chopin-Agent-Features. It uses
// one only when attached.features grants it (link.Has).
//
//   - capability-catalog: afterAttach reports the model server's models
//     (GET /models) in a capabilities message, with thinking levels when
//     --reasoning-effort says the server takes reasoning_effort. A turn's
//     model wins over --model; its thinkingLevel becomes the request's
//     reasoning_effort (turnEffort).
//   - attachments: the turn's images become image_url parts (data URLs)
//     and its text files text parts of the user message (userMessage). The
//     catalog lists image for the models that read images (--image-models,
//     or the server's input_modalities), and Chopin sends images only to
//     those.
//   - steer-turn: a steer's prompt is appended as a user message before the
//     turn's next round (runTurn's loop), answered with control-result.
//   - retry-turn: nothing to drop: the Planner keeps nothing beyond a turn.
//   - resumable-sessions and restart-notice: Serve passes what a dropped
//     link kept to the next attach as its resume, and after a 1012 retries
//     every 250 ms inside the announced window (client.RetryDelay). The
//     Planner asks no questions and reports no runs itself, so a drop keeps
//     nothing today but the link's place; a turn under way is lost.
//
// run-stage-deltas is not asked for: the Planner reports no workflow runs.
var implemented = []string{
	wire.FeatureCapabilityCatalog, wire.FeatureAttachments, wire.FeatureSteerTurn, wire.FeatureRetryTurn,
	wire.FeatureResumableSessions, wire.FeatureRestartNotice,
}

// afterAttach is what the Planner sends once attached (and resumed), before
// any turn: its catalog.
func (p *Planner) afterAttach(ctx context.Context, link *client.Link) {
	p.reportCatalog(ctx, link)
}

// turnEffort is the reasoning_effort of a turn: the person's thinkingLevel
// when they chose one, else --reasoning-effort.
func (p *Planner) turnEffort(t *client.Turn) string {
	if t.Message.ThinkingLevel != "" {
		return t.Message.ThinkingLevel
	}
	return p.effort
}

// Catalog is the value of a capabilities message ("Capability catalog"):
// the models a person may choose for this Planner's turns.
type Catalog struct {
	Models *CatalogModels `json:"models,omitempty"`
	// Checkout is the local checkout the Planner reads for the document
	// (checkout.go), a field of this Planner's own that Chopin keeps.
	Checkout *CatalogCheckout `json:"checkout,omitempty"`
}

// CatalogModels lists the models and the default.
type CatalogModels struct {
	Available []CatalogModel  `json:"available"`
	Default   *CatalogDefault `json:"default,omitempty"`
}

// CatalogModel is one model a turn may name.
type CatalogModel struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	ThinkingLevels []string `json:"thinkingLevels,omitempty"`
	InputTypes     []string `json:"inputTypes,omitempty"`
}

// CatalogDefault is what runs when a turn names no model or level.
type CatalogDefault struct {
	ID            string `json:"id"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
}

// BuildCatalog is the catalog of a model server's models: each listed
// model in the server's order, reading text only (images need the
// attachments feature), with levels as its thinking levels when the server
// takes reasoning_effort (nil: no reasoning control). defaultModel and
// defaultLevel are what a turn that names none runs with. Models without an
// id are left out, as Chopin would skip them.
func BuildCatalog(models []Model, levels []string, defaultModel, defaultLevel string) Catalog {
	var c CatalogModels
	for _, m := range models {
		if m.ID == "" {
			continue
		}
		c.Available = append(c.Available, CatalogModel{ID: m.ID, Name: m.ID, ThinkingLevels: levels, InputTypes: []string{"text"}})
	}
	if c.Available == nil {
		c.Available = []CatalogModel{}
	}
	if defaultModel != "" {
		c.Default = &CatalogDefault{ID: defaultModel}
		if len(levels) > 0 {
			c.Default.ThinkingLevel = defaultLevel
		}
	}
	return Catalog{Models: &c}
}
