package plannerhost

import (
	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/room"
)

// author is who makes a turn's edit_plan changes, for the plan's history:
// the Planner, with the turn and the model it runs on, as far as the host
// knows it (the document's chosen model, else the default one).
func (h *Host) author(call agentconn.ToolCall) room.Author {
	model := h.modelChoice(call.Document).Model
	if model == "" {
		model = h.DefaultModel(h.agent.Catalog(call.Document))
	}
	return room.Author{Kind: room.AuthorPlanner, Turn: call.Turn, Model: model}
}
