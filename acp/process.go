package acp

// The agent process: started with the document's attach, spoken to over its
// stdio with acp-go-sdk's client side, its stderr read into the log
// (bounded, never into Chat), and stopped when the bridge ends or the
// process is replaced after a crash.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// DefaultInitializeTimeout is how long an agent has to answer initialize.
const DefaultInitializeTimeout = 30 * time.Second

// Bounds on what an agent writes to stderr: each line is cut, and after
// maxStderrLines lines a process's stderr is read but no longer logged.
const (
	maxStderrLine  = 2000
	maxStderrLines = 2000
)

// process is one running agent.
type process struct {
	// set at construction
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *sdk.ClientSideConnection
	name   string // how messages name the agent
	exited chan struct{}

	// set once, before initialized is used
	init sdk.InitializeResponse

	// set before exited closes
	waitErr error
}

// ProcessError is why an agent could not be started or stopped answering:
// the person's words, for the planner's stderr and a waiting turn.
type ProcessError struct {
	Message string
	Err     error
}

func (e *ProcessError) Error() string { return e.Message }
func (e *ProcessError) Unwrap() error { return e.Err }

// startProcess starts command, connects its stdio to client and waits up to
// timeout for the answer to initialize.
func startProcess(ctx context.Context, name string, command, env []string, client *agentClient, timeout time.Duration, log *slog.Logger) (*process, error) {
	if len(command) == 0 || command[0] == "" {
		return nil, &ProcessError{Message: "No agent command is given."}
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, &ProcessError{Err: err, Message: fmt.Sprintf("The agent's command %q was not found on this computer. Install it, or name the agent's command after --.", command[0])}
	}
	cmd := exec.Command(path, command[1:]...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, &ProcessError{Err: err, Message: fmt.Sprintf("The agent %s could not be started: %v.", name, err)}
	}
	p := &process{cmd: cmd, stdin: stdin, name: name, exited: make(chan struct{})}
	var logged sync.WaitGroup
	logged.Go(func() { logStderr(stderr, log.With("agent", name, "pid", cmd.Process.Pid)) })
	go func() {
		logged.Wait() // Wait closes the pipes: read them to the end first
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	client.pace = newPacedReader(stdout)
	p.conn = sdk.NewClientSideConnection(client, stdin, client.pace)
	p.conn.SetLogger(log.With("agent", name))

	type answer struct {
		r   sdk.InitializeResponse
		err error
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan answer, 1)
	go func() {
		r, err := p.conn.Initialize(ictx, sdk.InitializeRequest{
			ProtocolVersion: sdk.ProtocolVersionNumber,
			ClientInfo:      &sdk.Implementation{Name: "chopin", Version: "1"},
			ClientCapabilities: sdk.ClientCapabilities{
				// Reading only: Chopin never lets an agent write or run
				// commands through it.
				Fs: sdk.FileSystemCapabilities{ReadTextFile: true},
			},
		})
		got <- answer{r, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-got:
		if a.err != nil {
			p.stop()
			if p.hasExited() {
				return nil, p.exitError("before it answered")
			}
			return nil, &ProcessError{Err: a.err, Message: fmt.Sprintf("The agent %s refused to start the Agent Client Protocol: %v.", name, a.err)}
		}
		p.init = a.r
		return p, nil
	case <-p.exited:
		return nil, p.exitError("before it answered")
	case <-timer.C:
		p.stop()
		return nil, &ProcessError{Message: fmt.Sprintf("The agent %s did not answer initialize within %s. Check that it speaks the Agent Client Protocol (for Gemini CLI: gemini --experimental-acp).", name, timeout)}
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitError words the process's end; call it after exited closed.
func (p *process) exitError(when string) *ProcessError {
	<-p.exited
	how := "it ended"
	if p.waitErr != nil {
		how = p.waitErr.Error()
	}
	return &ProcessError{Err: p.waitErr, Message: fmt.Sprintf("The agent %s exited %s (%s); its error output is in the planner's log.", p.name, when, how)}
}

// stop ends the process: its stdin closes, which ends an ACP agent; one that
// is still running two seconds later is killed.
func (p *process) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return
	case <-time.After(2 * time.Second):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// logStderr logs each line the agent writes to stderr, bounded.
func logStderr(r io.Reader, log *slog.Logger) {
	br := bufio.NewReaderSize(r, 4096)
	lines := 0
	for {
		line, err := readLine(br, maxStderrLine)
		if line != "" && lines < maxStderrLines {
			lines++
			log.Warn("agent stderr", "line", line)
			if lines == maxStderrLines {
				log.Warn("agent stderr: no more lines are logged from this process")
			}
		}
		if err != nil {
			_, _ = io.Copy(io.Discard, r)
			return
		}
	}
}

// readLine reads one line, keeping at most limit bytes of it.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var b strings.Builder
	for {
		chunk, isPrefix, err := br.ReadLine()
		if b.Len() < limit {
			b.Write(chunk[:min(len(chunk), limit-b.Len())])
		}
		if err != nil {
			if errors.Is(err, io.EOF) && b.Len() > 0 {
				return b.String(), nil
			}
			return b.String(), err
		}
		if !isPrefix {
			return b.String(), nil
		}
	}
}
