package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/gorilla/websocket"
)

// The processes the harness measures: building chopin and the hello-world
// server, starting them and the relay on free loopback ports, reading their
// CPU time and resident memory from /proc, and talking to a running chopin
// as a script (the agent token) and as a signed-in browser.

// helloSource is the hello-world server start-up is compared with: the
// standard library's HTTP server answering /healthz.
const helloSource = `package main

import (
	"net/http"
	"os"
)

func main() {
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{\"status\": \"ok\"}\n"))
	})
	if err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil); err != nil {
		os.Exit(1)
	}
}
`

// build makes the chopin binary (unless -bin names one), the start-up floor
// (cmd/chopin-bench/startfloor) and the hello-world server, all with
// CGO_ENABLED=0, into the run's temporary directory.
func (b *bench) build(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return fmt.Errorf("run it inside the chopin module (go env GOMOD: %q, %v)", gomod, err)
	}
	module := filepath.Dir(gomod)
	b.module = module
	b.chopin = b.o.bin
	if b.chopin == "" {
		b.source = module
		b.chopin = filepath.Join(b.tmp, "chopin")
		fmt.Fprintf(b.log, "building %s\n", b.chopin)
		if err := goBuild(ctx, b.source, b.chopin, "."); err != nil {
			return err
		}
	}
	b.floor = filepath.Join(b.tmp, "startfloor")
	if err := goBuild(ctx, module, b.floor, "./cmd/chopin-bench/startfloor"); err != nil {
		return err
	}
	helloDir := filepath.Join(b.tmp, "hello-src")
	if err := os.MkdirAll(helloDir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(helloDir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(helloDir, "main.go"), []byte(helloSource), 0o600); err != nil {
		return err
	}
	b.hello = filepath.Join(b.tmp, "hello")
	return goBuild(ctx, helloDir, b.hello, ".")
}

// goBuild builds pkg in dir into out with CGO_ENABLED=0, with flags before
// the package.
func goBuild(ctx context.Context, dir, out, pkg string, flags ...string) error {
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build", "-o", out}, flags...), pkg)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v\n%s", dir, err, msg)
	}
	return nil
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// proc is a process the harness started.
type proc struct {
	cmd    *exec.Cmd
	origin string // http://127.0.0.1:port
	stderr bytes.Buffer
	done   chan struct{}
}

// stop interrupts the process and waits for it to end; a process that has
// not ended after ten seconds is killed.
func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// startProc starts a command that serves HTTP on port and returns once its
// /healthz answers 200, with the time that took.
func startProc(ctx context.Context, name string, args, env []string, port int) (*proc, time.Duration, error) {
	p := &proc{cmd: exec.Command(name, args...), origin: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Stderr = &p.stderr
	client := &http.Client{Timeout: time.Second}
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	for {
		resp, err := client.Get(p.origin + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, time.Since(start), nil
			}
		}
		select {
		case <-p.done:
			return nil, 0, fmt.Errorf("%s ended before it answered: %s", filepath.Base(name), p.stderr.String())
		case <-ctx.Done():
			p.stop()
			return nil, 0, ctx.Err()
		default:
		}
		if time.Since(start) > 30*time.Second {
			p.stop()
			return nil, 0, fmt.Errorf("%s did not answer /healthz within 30s: %v", filepath.Base(name), err)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// chopinHome is one temporary config and data directory for chopin.
type chopinHome struct {
	configDir, dataDir string
	env                []string
}

func (b *bench) newHome(name string) *chopinHome {
	root := filepath.Join(b.tmp, name)
	h := &chopinHome{configDir: filepath.Join(root, "config"), dataDir: filepath.Join(root, "data")}
	h.env = apptest.ProcessEnv(root, "BROWSER=true")
	return h
}

// chopinServer is a running `chopin serve` and its clients.
type chopinServer struct {
	*proc
	home    *chopinHome
	token   string
	api     *http.Client // the agent token's
	browser *http.Client // a signed-in browser's cookie jar
}

// startChopin runs `chopin serve` on a free port in home, and signs a
// browser in.
func (b *bench) startChopin(ctx context.Context, home *chopinHome) (*chopinServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p, _, err := startProc(ctx, b.chopin, []string{"serve"}, append(home.env, "PORT="+strconv.Itoa(port)), port)
	if err != nil {
		return nil, err
	}
	s := &chopinServer{proc: p, home: home, api: &http.Client{Timeout: time.Minute}}
	raw, err := os.ReadFile(filepath.Join(home.configDir, "agent-token"))
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("the agent token: %w", err)
	}
	s.token = strings.TrimSpace(string(raw))
	if err := s.signIn(); err != nil {
		p.stop()
		return nil, err
	}
	return s, nil
}

// restartChopin starts the stopped server s again on its home, and signs
// a browser in anew.
func (b *bench) restartChopin(ctx context.Context, s *chopinServer) (*chopinServer, error) {
	return b.startChopin(ctx, s.home)
}

// signIn asks for a launch link with the agent token and opens it, as a
// browser does: the session cookie lands in s.browser's jar.
func (s *chopinServer) signIn() error {
	var link struct{ URL string }
	if err := s.call("POST", "/api/launch-links", nil, &link); err != nil {
		return err
	}
	jar, _ := cookiejar.New(nil)
	s.browser = &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := s.browser.Get(link.URL)
	if err != nil {
		return fmt.Errorf("open the launch link: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return fmt.Errorf("the launch link answered %s", resp.Status)
	}
	return nil
}

// call makes an API request with the agent token; out, when not nil,
// receives the JSON answer.
func (s *chopinServer) call(method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.origin+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.api.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, bytes.TrimSpace(raw))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// createDocument makes a document in repo ("owner/name") and, when source
// is not empty, sets its plan; it returns the document's id.
func (s *chopinServer) createDocument(repo, title, source string) (string, error) {
	var ch struct{ ID string }
	if err := s.call("POST", "/api/repositories/"+repo+"/channels", map[string]string{"title": title}, &ch); err != nil {
		return "", err
	}
	if source == "" {
		return ch.ID, nil
	}
	var plan struct{ Revision int }
	if err := s.call("GET", "/api/channels/"+ch.ID+"/plan", nil, &plan); err != nil {
		return "", err
	}
	if err := s.call("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": plan.Revision, "source": source}, nil); err != nil {
		return "", err
	}
	return ch.ID, nil
}

// roomSocket is a signed-in browser's socket on a document's room.
type roomSocket struct{ conn *websocket.Conn }

var dialer = &websocket.Dialer{HandshakeTimeout: 30 * time.Second}

// openRoom joins the document's room as its browser tab does, and returns
// once the join's snapshots have arrived.
func (s *chopinServer) openRoom(channelID string) (*roomSocket, error) {
	header := http.Header{"Origin": {s.origin}}
	u, _ := url.Parse(s.origin)
	for _, c := range s.browser.Jar.Cookies(u) {
		header.Add("Cookie", c.Name+"="+c.Value)
	}
	conn, resp, err := dialer.Dial("ws"+strings.TrimPrefix(s.origin, "http")+"/ws?channel="+channelID, header)
	if err != nil {
		status := ""
		if resp != nil {
			status = resp.Status
		}
		return nil, fmt.Errorf("open the room: %v %s", err, status)
	}
	rs := &roomSocket{conn: conn}
	if _, err := rs.until("decisions:snapshot"); err != nil {
		conn.Close()
		return nil, err
	}
	return rs, nil
}

// frame is a room frame as the harness reads it.
type frame struct {
	Type    string          `json:"type"`
	Version int             `json:"version"`
	Source  string          `json:"source"`
	Field   string          `json:"field"`
	Delta   string          `json:"delta"`
	Code    string          `json:"code"`
	Message json.RawMessage `json:"message"`
}

// next reads the next frame.
func (rs *roomSocket) next() (frame, error) {
	rs.conn.SetReadDeadline(time.Now().Add(time.Minute))
	_, raw, err := rs.conn.ReadMessage()
	if err != nil {
		return frame{}, err
	}
	var f frame
	if err := json.Unmarshal(raw, &f); err != nil {
		return frame{}, fmt.Errorf("a frame that is not JSON: %.200s", raw)
	}
	if f.Type == "error" {
		return f, fmt.Errorf("the room answered an error: %.300s", raw)
	}
	return f, nil
}

// until reads frames up to and including one of type typ.
func (rs *roomSocket) until(typ string) (frame, error) {
	for {
		f, err := rs.next()
		if err != nil {
			return f, err
		}
		if f.Type == typ {
			return f, nil
		}
	}
}

func (rs *roomSocket) send(v any) error {
	return rs.conn.WriteJSON(v)
}

// cpuTime is the CPU time, user and system, the process has used so far.
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14 and stime 15.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc/pid/stat")
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unreadable /proc/pid/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unreadable /proc/pid/stat")
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// ownCPU is the CPU time this process has used so far, to the
// microsecond (getrusage), where /proc/pid/stat counts 10 ms ticks.
func ownCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTicks is USER_HZ, the unit of /proc/pid/stat's times: 100 on every
// Linux the project runs on.
const clockTicks = 100

// residentBytes is the process's resident memory now (VmRSS).
func residentBytes(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	s := bufio.NewScanner(bytes.NewReader(raw))
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/pid/status")
}

// raiseFileLimit lets this process hold as many sockets as its hard limit
// allows: the rooms row opens a thousand.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// relayServer is the bare relay, a child process (this program's relay
// command).
type relayServer struct{ *proc }

func (b *bench) startRelay(ctx context.Context, name string) (*relayServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	db := filepath.Join(b.tmp, name+".db")
	p, _, err := startProc(ctx, b.harness, []string{"relay", "-db", db, "-port", strconv.Itoa(port)}, os.Environ(), port)
	if err != nil {
		return nil, err
	}
	return &relayServer{p}, nil
}

// dial opens a socket on one of the relay's endpoints.
func (r *relayServer) dial(path string) (*websocket.Conn, error) {
	conn, _, err := dialer.Dial("ws"+strings.TrimPrefix(r.origin, "http")+path, nil)
	return conn, err
}
