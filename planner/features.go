package planner

import (
	"context"

	"github.com/chopin-desktop/chopin/agentconn/client"
)

// implemented are the optional features ("Features" in the spec) this
// Planner implements, as it asks for them in Chopin-Agent-Features. It uses
// one only when attached.features grants it (link.Has).
//
// None yet, so it sends no header. The server grants only run-stage-deltas
// today, and a Planner that reports no workflow runs has no use for it. Each
// feature the server gains (issue 5) slots in here:
//
//   - capability-catalog: add it, and have afterAttach send Catalog(...) in a
//     capabilities message when link.Has("capability-catalog") (the client
//     needs that message first). A turn's model already wins over --model;
//     its thinkingLevel becomes the request's reasoning_effort (turnEffort).
//   - attachments: the turn's images become image_url parts and its text
//     files text parts of the user message (conversation).
//   - steer-turn: a steer's prompt is appended as a user message before the
//     turn's next round (runTurn's loop), answered with control-result.
//   - retry-turn: nothing to drop: the Planner keeps nothing beyond a turn.
//   - resumable-sessions and restart-notice: the Planner holds no questions
//     or runs across a drop; Serve already reattaches at once on 1012.
var implemented []string

// afterAttach is what the Planner sends once attached, before any turn:
// nothing until capability-catalog is implemented.
func (p *Planner) afterAttach(ctx context.Context, link *client.Link) {}

// turnEffort is the reasoning_effort of a turn: --reasoning-effort until
// turns carry a person's thinkingLevel (capability-catalog).
func (p *Planner) turnEffort(*client.Turn) string { return p.effort }

// Catalog is the value of a capabilities message ("Capability catalog"):
// the models a person may choose for this Planner's turns.
type Catalog struct {
	Models *CatalogModels `json:"models,omitempty"`
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
