package room

import (
	"context"
	"encoding/json"
)

// Persister is the durable side of a room. The app plugs the store in; every
// method is one transaction, and a room publishes a change only after the
// method that stored it has returned.
type Persister interface {
	// LoadPlan reads the plan's checkpoint and its whole journal, oldest
	// first (entries up to the checkpoint are kept history). A document
	// whose plan was never opened has Exists false.
	LoadPlan(ctx context.Context, channelID string) (PlanRecord, error)
	// CommitPlan appends accepted updates to the journal and advances the
	// plan's version. The first update's Version is the stored version plus one.
	CommitPlan(ctx context.Context, channelID string, updates []Update) error
	// CheckpointPlan stores the full text at a version (creating the plan
	// when it does not exist yet) and drops the journal through KeepAfter.
	CheckpointPlan(ctx context.Context, channelID string, cp Checkpoint) error

	// Messages reads the newest limit Chat messages, oldest first.
	Messages(ctx context.Context, channelID string, limit int) ([]Message, error)
	// SaveMessage inserts or replaces a Chat message.
	SaveMessage(ctx context.Context, m Message) error

	// Decisions reads every decision card of the document, oldest first.
	Decisions(ctx context.Context, channelID string) ([]Decision, error)
	// SaveDecisions inserts or replaces cards, together with the plan update
	// that places or removes their <Decision> lines, if any, in one transaction.
	SaveDecisions(ctx context.Context, channelID string, cards []Decision, placement []Update) error
}

// PlanRecord is the stored plan: a checkpoint and the journal after it.
type PlanRecord struct {
	Exists     bool
	Checkpoint Checkpoint
	Journal    []Update
}

// Checkpoint is the plan's full text at a version, in an epoch. The epoch
// names a history: it changes when the server replaces history, so clients
// holding another epoch reload from a snapshot.
type Checkpoint struct {
	Epoch     string
	Version   int64
	Source    string
	KeepAfter int64 // journal entries after this version stay; older ones go
}

// Update is one accepted change: a CodeMirror ChangeSet in its JSON form,
// from a client (ClientID) or the server ("server"), producing Version.
type Update struct {
	Version  int64           `json:"-"`
	ClientID string          `json:"clientID"`
	Changes  json.RawMessage `json:"changes"`
	// Author is who made the change, for the history; never on the wire.
	// Empty is the server.
	Author Author `json:"-"`
}
