package cli

// Which model server and model chopin planner answers with when the
// person named neither: the first of the usual local servers that answers
// (modelserver), and the model chosen in Chopin's composer for the
// documents, else the server's first, said on stderr.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/chopin-desktop/chopin/modelserver"
	"github.com/chopin-desktop/chopin/planner"
)

// noModelServerError is no model server answering at any usual address.
type noModelServerError struct{ tried []modelserver.Server }

func (e noModelServerError) Error() string {
	return "No model server answered on this computer; tried " + modelserver.Tried(e.tried) +
		". Start one (for Ollama: ollama serve, then ollama pull qwen2.5), or name yours with --base-url."
}

// findModelServer is the base URL of the first usual model server that
// answers with a list of models.
func (c *CLI) findModelServer(ctx context.Context) (string, error) {
	servers := c.ModelServers
	if servers == nil {
		servers = modelserver.Usual
	}
	running := modelserver.Running(modelserver.Probe(ctx, servers))
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if len(running) == 0 {
		return "", noModelServerError{tried: servers}
	}
	// One with models before one without, which would only be refused.
	for _, s := range running {
		if len(s.Models) > 0 {
			return s.BaseURL, nil
		}
	}
	return running[0].BaseURL, nil
}

// chooseModel picks the model for turns that name none on a server with
// several: the one a person chose in Chopin's composer for one of the
// documents, when the server has it, else the server's first. The
// sentence says which, and why, for stderr.
func chooseModel(ctx context.Context, endpoint, token string, documents, known []string) (model, sentence string) {
	api := apiOfEndpoint(endpoint, token)
	for _, doc := range documents {
		if api == nil {
			break
		}
		id, err := api.documentID(ctx, doc)
		if err != nil {
			continue
		}
		var choice struct {
			Model string `json:"model"`
		}
		if api.call(ctx, http.MethodGet, "/api/channels/"+url.PathEscape(id)+"/planner/model", nil, &choice) == nil &&
			slices.Contains(known, choice.Model) {
			return choice.Model, fmt.Sprintf("The model server has %d models; answering with %s, the one chosen in Chopin's composer. Choose another there, or with --model.", len(known), choice.Model)
		}
	}
	return known[0], fmt.Sprintf("The model server has %d models; answering with %s, its first, where Chopin's composer chose none. Choose another there, or with --model.", len(known), known[0])
}

// apiOfEndpoint is Chopin's HTTP API behind an agent connection URL
// (ws(s)://host/api/v1/agent), on this computer only; nil otherwise.
func apiOfEndpoint(endpoint, token string) *client {
	u, err := url.Parse(endpoint)
	if err != nil || !modelserver.Loopback(strings.Replace(u.Scheme, "ws", "http", 1)+"://"+u.Host) {
		return nil
	}
	origin := strings.Replace(u.Scheme, "ws", "http", 1) + "://" + u.Host
	return &client{origin: origin, token: token, http: &http.Client{
		Transport:     &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// modelCheckError adds to a model server's error what the person can do
// from the command line.
func modelCheckError(err error) error {
	var ue *planner.UnreachableError
	if errors.As(err, &ue) {
		return fmt.Errorf("%w Start it, or name another with --base-url.", err)
	}
	return err
}
