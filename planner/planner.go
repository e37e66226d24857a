package planner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/client"
)

// MaxRounds bounds a turn's calls to the model: a model that is still
// calling tools after this many rounds has its turn failed, rather than
// looping for ever on a person's machine.
const MaxRounds = 32

// Config is what a Planner runs with.
type Config struct {
	BaseURL string // the model server's OpenAI-compatible API; DefaultBaseURL if empty
	APIKey  string // OPENAI_API_KEY; sent only to the model server, never logged
	// Model is used when a turn names none; a turn's model wins.
	Model string
	// ReasoningEffort is sent as reasoning_effort when set.
	ReasoningEffort string
	// ImageModels are models that read images, besides those the model
	// server lists with image among their input_modalities.
	ImageModels []string
	HTTPClient  *http.Client // nil: a client of its own
	Logger      *slog.Logger // nil: nothing is logged
	// Notify receives lines for the person running the Planner: attached,
	// dropped, reattached. nil prints nothing.
	Notify func(line string)
	// Checkout, when set, is the local checkout every document's turns
	// read (--checkout), instead of the one Chopin has for the document's
	// repository. An absolute path.
	Checkout string
}

// Planner answers turns with a model. One Planner serves any number of
// documents' links; their turns run side by side.
type Planner struct {
	server *ModelServer
	model  string
	effort string
	log    *slog.Logger

	imageModels []string
	steers      steers
	notify      func(string)

	checkoutPath string       // --checkout; "" asks Chopin at every turn
	chopinHTTP   *http.Client // Chopin's HTTP API, on this computer
	links        links        // each attached link's API origin, token and catalog
	// backoff is the wait before attaching again after the n-th failure in
	// a row; tests shorten it.
	backoff func(n int) time.Duration
}

// New returns a Planner for cfg's model server.
func New(cfg Config) (*Planner, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	s, err := NewModelServer(base, cfg.APIKey, cfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	p := &Planner{server: s, model: cfg.Model, effort: cfg.ReasoningEffort, log: cfg.Logger, notify: cfg.Notify, imageModels: cfg.ImageModels,
		checkoutPath: cfg.Checkout, chopinHTTP: &http.Client{Transport: &http.Transport{Proxy: nil}}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.notify == nil {
		p.notify = func(string) {}
	}
	return p, nil
}

// Server is the model server the Planner uses.
func (p *Planner) Server() *ModelServer { return p.server }

// Model is the model used for turns that name none.
func (p *Planner) Model() string { return p.model }

// UseModel sets the model for turns that name none, such as one of the
// Known models of a *NoModelError. It is for before Serve.
func (p *Planner) UseModel(id string) { p.model = id }

// ErrNoModel is a Planner without a model on a server that lists several.
var ErrNoModel = errors.New("no model chosen")

// NoModelError asks the person to choose one of the server's models.
type NoModelError struct {
	BaseURL string
	Known   []string
}

func (e *NoModelError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("The model server at %s has no models yet. Add one first (for Ollama: ollama pull qwen2.5), then choose it with --model.", e.BaseURL)
	}
	return fmt.Sprintf("Choose a model with --model; the model server at %s has: %s.", e.BaseURL, (&UnknownModelError{Known: e.Known}).list())
}

func (e *NoModelError) Is(target error) bool { return target == ErrNoModel }

// Check asks the model server for its models before any document is
// attached, so a person learns at once that it is not running or that the
// model is not there. Without a default model it takes the server's only
// one; with several it returns a *NoModelError. A server that cannot list
// its models (HTTP 404 on /models) is trusted with the model as given.
func (p *Planner) Check(ctx context.Context) error {
	models, err := p.server.Models(ctx)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound && p.model != "" {
		p.log.Warn("the model server does not list its models", "url", p.server.baseURL)
		return nil
	}
	if err != nil {
		return err
	}
	ids := modelIDs(models)
	switch {
	case p.model != "":
		for _, id := range ids {
			if id == p.model {
				return nil
			}
		}
		return &UnknownModelError{Model: p.model, Known: ids}
	case len(ids) == 1:
		p.model = ids[0]
		return nil
	}
	return &NoModelError{BaseURL: p.server.baseURL, Known: ids}
}

// Handler is the client.Handler that runs the Planner's turns.
func (p *Planner) Handler() client.Handler {
	return client.Handler{Turn: p.runTurn, Steer: p.steers.take}
}
