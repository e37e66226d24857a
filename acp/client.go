package acp

// What the agent asks of the bridge (acp-go-sdk's Client): session updates
// (routed to the document's turn or an isolated session's), permission
// requests (permission.go), and file reads confined to the session's
// working directory. Writing and terminals are not offered; an isolated session
// gets no Decisions and reads no files.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/checkout"
	"github.com/chopin-desktop/chopin/redact"
)

// maxReadBytes bounds a file the agent reads through the bridge.
const maxReadBytes = 1 << 20

// agentClient is what one agent process asks of the bridge.
type agentClient struct {
	d    *document
	pace *pacedReader // the process's stdout, set before it is read
}

var _ sdk.Client = (*agentClient)(nil)

func (c *agentClient) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	defer c.pace.done()
	d := c.d
	u := n.Update
	d.mu.Lock()
	st := d.turn
	ours := n.SessionId == d.session
	var isolated *turnState
	iso := d.isolatedByACP(n.SessionId)
	if iso != nil {
		isolated = iso.turn
	}
	d.mu.Unlock()
	switch {
	case u.AvailableCommandsUpdate != nil:
		// The catalog is the document's session's: an isolated session's
		// commands are not the person's. (An update that comes before
		// session/new has answered cannot be told apart; it is the same
		// agent's list.)
		if iso == nil {
			d.mu.Lock()
			d.catalog.setCommands(u.AvailableCommandsUpdate.AvailableCommands)
			d.mu.Unlock()
			d.reportCatalog()
		}
	case iso != nil:
		if isolated != nil {
			isolated.enqueue(u)
		}
	case st != nil && ours:
		st.enqueue(u)
	}
	return nil
}

// errRefused is a request the bridge does not serve.
func errRefused(what string) error {
	return sdk.NewMethodNotFound(what)
}

// ReadTextFile reads a file inside the session's working directory, never
// under .git, with credentials masked.
func (c *agentClient) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.d.mu.Lock()
	cwd := c.d.cwd
	isolated := c.d.isolatedByACP(p.SessionId) != nil
	c.d.mu.Unlock()
	if isolated {
		// A background job's session works on the material in its prompt
		// alone; a prompt made of a document's text must not lead the
		// agent to read the checkout into what Chopin publishes.
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"path": p.Path, "error": "an isolated session reads no files"})
	}
	text, err := readConfined(cwd, p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"path": p.Path, "error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: redact.Text(lines(text, p.Line, p.Limit))}, nil
}

// readConfined reads path when it is a regular file that resolves, after
// every symbolic link, inside root and outside any .git folder: the
// checkout package's rule (checkout.OpenFile), in the bridge's words.
func readConfined(root, path string) (string, error) {
	if root == "" {
		return "", errors.New("no session is open")
	}
	if !filepath.IsAbs(path) {
		return "", errors.New("the path must be absolute")
	}
	f, _, err := checkout.OpenFile(root, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errors.New("no such file")
	case errors.Is(err, checkout.ErrOutside):
		return "", errors.New("the path is outside the working directory")
	case errors.Is(err, checkout.ErrGit):
		return "", errors.New("files under .git are not readable")
	case errors.Is(err, checkout.ErrFolder), errors.Is(err, checkout.ErrNotFile):
		return "", errors.New("the path is not a file")
	case err != nil:
		return "", errors.New("the file cannot be read")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxReadBytes+1))
	if err != nil {
		return "", errors.New("the file cannot be read")
	}
	if len(b) > maxReadBytes {
		return "", fmt.Errorf("the file is larger than %d bytes; read it in parts with line and limit", maxReadBytes)
	}
	return string(b), nil
}

// lines is the part of text from line (1-based) for limit lines.
func lines(text string, line, limit *int) string {
	if line == nil && limit == nil {
		return text
	}
	all := strings.SplitAfter(text, "\n")
	start := 0
	if line != nil && *line > 1 {
		start = min(*line-1, len(all))
	}
	end := len(all)
	if limit != nil && *limit >= 0 && start+*limit < end {
		end = start + *limit
	}
	return strings.Join(all[start:end], "")
}

func (c *agentClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errRefused("fs/write_text_file")
}

func (c *agentClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errRefused("terminal/create")
}

func (c *agentClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errRefused("terminal/kill")
}

func (c *agentClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errRefused("terminal/output")
}

func (c *agentClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errRefused("terminal/release")
}

func (c *agentClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errRefused("terminal/wait_for_exit")
}
