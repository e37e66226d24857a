package plannerhost

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/room"
)

// The Host and the agentconn.Directory half of the agent connection (GET
// /api/v1/agent, spec/agent-connection.md): agentconn serves the wire and
// the link lifecycle, and asks the Host who and what: the account a bearer
// is, the document a reference names, and whether the account may hold
// the document's Planner.

// Host is the server's side of every document's Planner. app builds one
// with New, hands it to room.NewHub and agentconn.New, and then Plugs those
// two into it before serving.
type Host struct {
	// Set at construction.
	log                 *slog.Logger
	login               string
	model               string
	maxStoredImageBytes int64
	checkToken          func(bearer string) bool
	docs                Catalog
	store               Storage
	history             History // nil: no history tools
	attachedHook        func(documentID string)

	// Set once by Plug, before the first link or socket.
	hub   *room.Hub
	agent *agentconn.Server

	// Per-document state, each part guarded by its own mu.
	runs      runBoard        // run cards per document
	outlines  outlineMemories // outlines the Planner was shown
	questions openQuestions   // input-requests in rooms' hands
	answers   pendingAnswers  // answers nobody waits on, for the Planner

	// replies counts the Planner replies still streaming (and steers still
	// waiting for their answer), so shutdown saves each one's end before
	// the store closes.
	replies sync.WaitGroup
}

// Options are what a Host needs from the process around it.
type Options struct {
	Logger *slog.Logger
	// Login is the local account: the one login that may hold a
	// document's Planner, and a reply's author when the link names none.
	Login string
	// Model is MODEL, a turn's model when a person chose none ("" for the
	// client's default).
	Model string
	// MaxStoredImageBytes bounds an image a tool made or upload_plan_image
	// took, once stored.
	MaxStoredImageBytes int64
	// CheckToken reports whether a bearer is the local agent token now.
	CheckToken func(bearer string) bool
	Catalog    Catalog
	Storage    Storage
	// History, when set, is the documents' kept versions, which
	// list_versions and read_version read.
	History History
	// PlannerAttached, when set, is told each time a Planner attaches to a
	// document, so background work waiting for one can resume.
	PlannerAttached func(documentID string)
}

var (
	_ agentconn.Host = (*Host)(nil)
	_ room.Planner   = (*Host)(nil)
)

// New builds a Host. It takes no links and no messages until Plug.
func New(o Options) *Host {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Host{log: o.Logger, login: o.Login, model: o.Model, maxStoredImageBytes: o.MaxStoredImageBytes,
		checkToken: o.CheckToken, docs: o.Catalog, store: o.Storage, history: o.History, attachedHook: o.PlannerAttached}
}

// Plug gives h the room hub whose Planner it is and the agent connection
// server whose Host it is; the two are built with h, so they come after
// New. It also takes the hub's answers nobody waits on. Call it once,
// before serving.
func (h *Host) Plug(hub *room.Hub, agent *agentconn.Server) {
	h.hub, h.agent = hub, agent
	hub.OnUnawaited(h.answerUnawaited)
}

// Wait waits for the replies still streaming to be saved: call it after
// the agent connection shut down and before the store closes.
func (h *Host) Wait() { h.replies.Wait() }

// Forget drops what h kept for a deleted document.
func (h *Host) Forget(documentID string) {
	h.runs.forget(documentID)
	h.outlines.forget(documentID)
}

// Authenticate knows one bearer: the local agent token, read again from its
// file on rotation. It is the local account.
func (h *Host) Authenticate(_ context.Context, bearer string) (agentconn.Account, error) {
	if !h.checkToken(bearer) {
		return agentconn.Account{}, agentconn.ErrUnauthorized
	}
	return agentconn.Account{Login: h.login}, nil
}

// Document resolves attach's document: an ID, or the document's Chopin URL,
// absolute (on this origin) or a path, by its current slug or any former one.
func (h *Host) Document(ctx context.Context, ref string) (agentconn.Document, error) {
	ch, err := h.docs.DocumentByRef(ctx, ref)
	if errors.Is(err, ErrNotFound) {
		return agentconn.Document{}, agentconn.ErrDocumentNotFound
	}
	if err != nil {
		return agentconn.Document{}, err
	}
	return agentconn.Document{ID: ch.ID, Title: ch.Title, Repository: ch.Repository,
		URL: ch.URL, Archived: ch.Archived()}, nil
}

// Access is the one role check: may this account hold the document's
// Planner (push or administration access)? The local account administers
// every repository; any other login has no access. An archived document is
// refused by agentconn itself, with the spec's document-archived.
func (h *Host) Access(_ context.Context, account agentconn.Account, _ agentconn.Document) error {
	if account.Login != h.login {
		return agentconn.ErrForbidden
	}
	return nil
}

// PlannerChanged shows the document's open tabs the Planner's new state.
func (h *Host) PlannerChanged(documentID string, status agentconn.PlannerStatus) {
	if r, ok := h.hub.Room(documentID); ok {
		r.ShowPlanner(h.status(documentID, status))
		r.ShowModel(h.ModelState(documentID)) // a catalog ends with its link
	}
	if status.State == agentconn.PlannerAttached {
		go h.flushAnswers(documentID)
		if h.attachedHook != nil {
			go h.attachedHook(documentID)
		}
	}
}
