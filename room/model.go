package room

// chat:model, the composer's model state (capability-catalog): the models,
// thinking levels and commands the attached Planner's client reported, and
// the document's saved choice. The app shapes the state; the room carries it
// to every member when it changes, and to a socket when it joins.

// ShowModel sends every member the document's model state.
func (r *Room) ShowModel(state any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.broadcastLocked(msgChatModel{Type: "chat:model", Model: state})
}

// ShowModel sends this member the document's model state, as when it joins.
func (m *Member) ShowModel(state any) {
	m.conn.Send(encode(msgChatModel{Type: "chat:model", Model: state}))
}

type msgChatModel struct {
	Type  string `json:"type"` // chat:model
	Model any    `json:"model"`
}
