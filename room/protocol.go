package room

// The room protocol: one JSON object per WebSocket text frame, with a string
// type. docs/room-protocol.md describes every message.

// From the browser.
type (
	inEnvelope struct {
		Type string `json:"type"`
		ID   string `json:"id,omitempty"` // echoed in the reply, so a client can match it
	}
	inPlanOpen struct {
		Type    string `json:"type"`
		ID      string `json:"id,omitempty"`
		Epoch   string `json:"epoch"`
		Version int64  `json:"version"`
	}
	inPlanPush struct {
		Type    string   `json:"type"`
		ID      string   `json:"id,omitempty"`
		Version int64    `json:"version"`
		Updates []Update `json:"updates"`
	}
	inChatSend struct {
		Type    string       `json:"type"`
		ID      string       `json:"id,omitempty"`
		Text    string       `json:"text"`
		Command *ChatCommand `json:"command,omitempty"`
		// Attachments are the files sent with the message (attachments.go).
		Attachments []AttachmentUpload `json:"attachments,omitempty"`
		// References are the documents the message refers to (references.go).
		References []ReferenceRequest `json:"references,omitempty"`
	}
	inDecisionAnswer struct {
		Type     string     `json:"type"`
		ID       string     `json:"id,omitempty"`
		Decision string     `json:"decision"`
		Answer   CardAnswer `json:"answer"`
	}
	inDecisionCancel struct {
		Type     string `json:"type"`
		ID       string `json:"id,omitempty"`
		Decision string `json:"decision"`
	}
)

// To the browser.
type (
	msgHello struct {
		Type     string  `json:"type"` // session:hello
		Identity         // login, name, canEdit, canManage
		Channel  Channel `json:"channel"`
	}
	msgChannel struct {
		Type    string  `json:"type"` // session:channel
		Channel Channel `json:"channel"`
		CanEdit bool    `json:"canEdit"`
	}
	msgDeleted struct {
		Type    string `json:"type"` // session:deleted
		Channel string `json:"channel"`
	}
	msgPresence struct {
		Type    string `json:"type"` // session:presence
		Members int    `json:"members"`
	}
	msgPlanSnapshot struct {
		Type    string `json:"type"` // plan:snapshot
		ID      string `json:"id,omitempty"`
		Epoch   string `json:"epoch"`
		Version int64  `json:"version"`
		Source  string `json:"source"`
	}
	msgPlanUpdates struct {
		Type    string   `json:"type"` // plan:updates
		ID      string   `json:"id,omitempty"`
		Epoch   string   `json:"epoch"`
		Version int64    `json:"version"` // the version the first update applies to
		Updates []Update `json:"updates"`
	}
	msgPlanAck struct {
		Type    string `json:"type"` // plan:ack
		ID      string `json:"id,omitempty"`
		Version int64  `json:"version"`
	}
	msgChatSnapshot struct {
		Type     string         `json:"type"` // chat:snapshot
		Messages []FrameMessage `json:"messages"`
		Before   *string        `json:"before"` // the cursor of older messages; null when these begin at the first
	}
	msgChatMessage struct {
		Type    string       `json:"type"` // chat:message
		Message FrameMessage `json:"message"`
	}
	msgDecisionsSnapshot struct {
		Type      string     `json:"type"` // decisions:snapshot
		Decisions []Decision `json:"decisions"`
	}
	msgDecision struct {
		Type     string   `json:"type"` // decision:update
		Decision Decision `json:"decision"`
	}
	msgOK struct {
		Type string `json:"type"` // ok: a request without other reply succeeded
		ID   string `json:"id,omitempty"`
	}
	msgError struct {
		Type    string `json:"type"` // error
		ID      string `json:"id,omitempty"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Version *int64 `json:"version,omitempty"` // plan:push refused: the current version
	}
)
