package plannerhost

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/chopin-desktop/chopin/picture"
	"github.com/chopin-desktop/chopin/room"
)

// What the bridge needs of the catalog and the database, as small
// interfaces in its own terms: app implements them over its store (with
// checks that it does), converting the store's records to these. Each
// method is one of the store's use cases, so each is one transaction.

// ErrNotFound is what the catalog and the storage return (or wrap) when
// the document, or the record asked for, does not exist.
var ErrNotFound = errors.New("not found")

// Catalog finds documents, as their rooms know them (with their URL on
// this origin).
type Catalog interface {
	// Document is the document with the ID.
	Document(ctx context.Context, id string) (room.Channel, error)
	// DocumentByRef resolves an attach's document: an ID, or the
	// document's Chopin URL, absolute on this origin or a path, by its
	// current slug or any former one.
	DocumentByRef(ctx context.Context, ref string) (room.Channel, error)
}

// Storage is everything the bridge keeps and reads.
type Storage interface {
	Transcript
	Images
	RunStore
	ModelChoices
	References
}

// Transcript is a document's Chat as a turn reads it.
type Transcript interface {
	// Messages are the document's newest limit messages, oldest first.
	Messages(ctx context.Context, channelID string, limit int) ([]room.Message, error)
	// SaveReplyTo records replyID as the latest Planner reply to a
	// person's message, replacing an earlier attempt's.
	SaveReplyTo(ctx context.Context, channelID, messageID, replyID string) error
}

// Images are a document's own images: those a tool made, and those
// upload_plan_image stored.
type Images interface {
	// SaveImage keeps img as one of the document's images; the same bytes
	// saved again leave it as it was.
	SaveImage(ctx context.Context, channelID string, img picture.Image) error
	// Image reads one of the document's images by the SHA-256 of its bytes.
	Image(ctx context.Context, channelID, sha string) (picture.Image, error)
}

// RunStore keeps each document's run cards, every stage included.
type RunStore interface {
	// Runs are the document's stored runs, first reported first.
	Runs(ctx context.Context, channelID string) ([]StoredRun, error)
	// SaveRuns writes a report's changes: each update (a new run goes
	// after the document's others), then the runs deleted.
	SaveRuns(ctx context.Context, channelID string, updates []RunUpdate, deleted []string) error
}

// ModelChoices keeps each document's chosen model and thinking level.
type ModelChoices interface {
	// ModelChoice reads the document's choice; ErrNotFound when it has none.
	ModelChoice(ctx context.Context, channelID string) (ModelChoice, error)
	// MarkModelFellBack records that Chat said the choice of model and
	// level fell back. It reports false when the saved choice is another
	// one, or the fallback was already recorded, so the notice is said once.
	MarkModelFellBack(ctx context.Context, channelID, model, thinkingLevel string) (bool, error)
}

// StoredRun is one stored run: its card without stages, and every stage it
// has, in order.
type StoredRun struct {
	ID     string
	Card   json.RawMessage
	Stages []RunStage
}

// RunStage is one stored stage of a run: its place in the run and the
// stage as the wire sends it.
type RunStage struct {
	ID       string
	Position int
	Body     json.RawMessage
}

// RunUpdate is what one report changed of a run: its card, and either
// every stage (ReplaceStages) or only the stages it names, added or
// replaced by ID.
type RunUpdate struct {
	ID            string
	Card          json.RawMessage
	ReplaceStages bool
	Stages        []RunStage
}
