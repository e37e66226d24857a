package acp

// The agent process: started with the document's attach, in the
// repository's checkout (or the document's folder) and a process group of
// its own (group_unix.go, group_windows.go), spoken to over its stdio with
// acp-go-sdk's client side, its stderr read into the log (bounded, never
// into Chat), and stopped with everything it started when the bridge ends,
// the link to the document ends, or the process is replaced after a
// crash.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
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

// Stopping an agent: its stdin closes, which ends an ACP agent; after
// stdinGrace its process group gets SIGTERM, and after termGrace SIGKILL.
// Together well under the 5 seconds a person waits for chopin planner to
// exit.
const (
	stdinGrace = 500 * time.Millisecond
	termGrace  = 2 * time.Second
)

// process is one running agent.
type process struct {
	// set at construction
	cmd    *exec.Cmd
	group  *group // the agent and everything it starts
	stdin  io.WriteCloser
	stdout *os.File // the read ends of its output, closed by stop
	stderr *os.File
	conn   *sdk.ClientSideConnection
	name   string // how messages name the agent
	exited chan struct{}

	// set once, before initialized is used
	init sdk.InitializeResponse

	// set before exited closes
	waitErr error

	stopOnce sync.Once
	stopping atomic.Bool   // stop has begun: the agent takes no more requests
	stopped  chan struct{} // closed when stop has ended the group
}

// ProcessError is why an agent could not be started or stopped answering:
// the person's words, for the planner's stderr and a waiting turn.
type ProcessError struct {
	Message string
	Err     error
}

func (e *ProcessError) Error() string { return e.Message }
func (e *ProcessError) Unwrap() error { return e.Err }

// agentCommand says how to start the agent: its command line, the folder
// it runs in, and its environment (nil: the planner's).
type agentCommand struct {
	args []string
	dir  string
	env  []string
}

// startProcess starts the agent in a process group of its own, connects
// its stdio to client and waits up to timeout for the answer to
// initialize.
func startProcess(ctx context.Context, name, version string, ac agentCommand, client *agentClient, timeout time.Duration, log *slog.Logger) (*process, error) {
	command := ac.args
	if len(command) == 0 || command[0] == "" {
		return nil, &ProcessError{Message: "No agent command is given."}
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return nil, &ProcessError{Err: err, Message: fmt.Sprintf("The agent's command %q was not found on this computer. Install it, or name the agent's command after --.", command[0])}
	}
	cmd := exec.Command(path, command[1:]...)
	cmd.Env, cmd.Dir = ac.env, ac.dir
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Its output through pipes of the bridge's own, so that its exit is
	// seen when it ends, whatever it started that holds them open.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		stdin.Close()
		return nil, &ProcessError{Err: err, Message: fmt.Sprintf("The agent %s could not be started: %v.", name, err)}
	}
	p := &process{cmd: cmd, group: groupOf(cmd, log), stdin: stdin, stdout: outR, stderr: errR, name: name,
		exited: make(chan struct{}), stopped: make(chan struct{})}
	go logStderr(errR, log.With("agent", name, "pid", cmd.Process.Pid))
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	client.pace = newPacedReader(outR)
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
			ClientInfo:      &sdk.Implementation{Name: "chopin", Title: sdk.Ptr("Chopin"), Version: version},
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
			// An agent that dies closes its stdout before its end is seen.
			exited := waitUntil(p.hasExited, 200*time.Millisecond)
			p.stop()
			if exited {
				return nil, p.exitError("before it answered")
			}
			return nil, &ProcessError{Err: a.err, Message: fmt.Sprintf("The agent %s refused to start the Agent Client Protocol: %v.", name, a.err)}
		}
		p.init = a.r
		return p, nil
	case <-p.exited:
		p.stop()
		return nil, p.exitError("before it answered")
	case <-timer.C:
		p.stop()
		return nil, &ProcessError{Message: fmt.Sprintf("The agent %s did not answer initialize within %s. Check that it speaks the Agent Client Protocol (for Gemini CLI: gemini --acp, or gemini --experimental-acp for an older version).", name, timeout)}
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

// stop ends the agent and everything it started: its stdin closes, which
// ends an ACP agent; stdinGrace later what is left of its process group
// gets SIGTERM, and termGrace after that SIGKILL. It returns once the
// group is gone (at most about stdinGrace+termGrace), and may be called
// again, also after the agent ended by itself (its group may outlive it).
func (p *process) stop() {
	p.stopping.Store(true)
	p.stopOnce.Do(func() {
		defer close(p.stopped)
		_ = p.stdin.Close()
		gone := func() bool { return p.hasExited() && !p.group.alive() }
		if !waitUntil(gone, stdinGrace) {
			p.group.terminate()
			if !waitUntil(gone, termGrace) {
				p.group.kill()
				_ = p.cmd.Process.Kill()
			}
		}
		select {
		case <-p.exited:
		case <-time.After(termGrace):
			// A process the kernel cannot end (stuck in a device): leave it.
		}
		p.group.release()
		// Its output pipes are held open only by what escaped the group.
		p.stdout.Close()
		p.stderr.Close()
	})
	<-p.stopped
}

// waitUntil polls done until it is true or wait passes, and reports it.
func waitUntil(done func() bool, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for !done() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
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
