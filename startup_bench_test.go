package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/chopin-desktop/chopin/store"
)

// BenchmarkStartup measures a double-click: from starting the process to
// its first 200 from /healthz, on an empty database and on one with 10,000
// documents, each start after a clean stop (the first start, which makes
// the database or checks it whole, is not timed). It also reports the
// process's resident memory once idle, the size of the static binary, and
// the start as Chopin's own start-up line times it (New to serving). In
// the same run, alternately, it starts a hello-world Go server built the
// same way (CGO_ENABLED=0) and polled the same way: the ratio is what
// Chopin adds to starting any Go server. The harness (cmd/chopin-bench
// -only start) adds the large database of plans, Chat and pictures and the
// start after a crash.
func BenchmarkStartup(b *testing.B) {
	hello := buildHelloServer(b)
	for _, docs := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("documents=%d", docs), func(b *testing.B) {
			h := newHome(b)
			if docs > 0 {
				seedDocuments(b, filepath.Join(h.dataDir, "chopin.db"), docs)
			}
			startOnce(b, h.env, chopinBin, "serve") // makes the database, or checks it whole
			var starts, hellos, inside []time.Duration
			var rss float64
			for range b.N {
				d, r, log := startOnce(b, h.env, chopinBin, "serve")
				starts = append(starts, d)
				rss = max(rss, r)
				inside = append(inside, startLineTook(b, log))
				d, _, _ = startOnce(b, os.Environ(), hello)
				hellos = append(hellos, d)
			}
			slices.Sort(inside)
			b.ReportMetric(float64(inside[len(inside)/2])/float64(time.Millisecond), "median-in-process-ms")
			slices.Sort(starts)
			slices.Sort(hellos)
			b.ReportMetric(float64(starts[len(starts)/2])/float64(time.Millisecond), "median-start-ms")
			b.ReportMetric(float64(hellos[len(hellos)/2])/float64(time.Millisecond), "hello-median-start-ms")
			b.ReportMetric(float64(starts[len(starts)/2])/float64(hellos[len(hellos)/2]), "ratio-to-hello")
			b.ReportMetric(rss, "idle-RSS-MB")
			if st, err := os.Stat(chopinBin); err == nil {
				b.ReportMetric(float64(st.Size())/(1<<20), "binary-MB")
			}
		})
	}
}

// helloServer is the baseline of BenchmarkStartup: a Go server that
// answers /healthz on $PORT and does nothing else.
const helloServer = `package main

import (
	"net/http"
	"os"
)

func main() {
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil)
}
`

func buildHelloServer(b *testing.B) string {
	dir := b.TempDir()
	src := filepath.Join(dir, "hello.go")
	if err := os.WriteFile(src, []byte(helloServer), 0o600); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build the hello-world server: %v\n%s", err, out)
	}
	return bin
}

// startOnce starts bin with args on a free port, polls /healthz until it
// answers 200, reads the idle resident memory, and stops it. It returns
// what the process wrote to stderr too.
func startOnce(b *testing.B, env []string, bin string, args ...string) (time.Duration, float64, string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(env, "PORT="+strconv.Itoa(port))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	health := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	client := &http.Client{Timeout: time.Second}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	for {
		resp, err := client.Get(health)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 20*time.Second {
			cmd.Process.Kill()
			cmd.Wait()
			b.Fatalf("no /healthz within 20s: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)

	time.Sleep(500 * time.Millisecond) // let start-up garbage settle
	rss := residentMB(b, cmd.Process.Pid)
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	return elapsed, rss, stderr.String()
}

// startLineTook is the whole start as Chopin's start-up line says (took=),
// which must also say the start did not read the whole database.
func startLineTook(b *testing.B, log string) time.Duration {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "msg=start-up ") {
			continue
		}
		if !strings.Contains(line, " whole_check=false") {
			b.Fatalf("a start after a clean stop read the whole database:\n%s", line)
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "took="); ok {
				d, err := time.ParseDuration(v)
				if err != nil {
					b.Fatal(err)
				}
				return d
			}
		}
	}
	b.Fatalf("no start-up line in chopin's log:\n%s", log)
	return 0
}

func residentMB(b *testing.B, pid int) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0 // not Linux: no reading
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// seedDocuments creates a database with n documents in one repository. It
// writes the rows directly in one transaction, which is what makes 10,000
// documents take seconds instead of minutes of per-document fsyncs.
func seedDocuments(b *testing.B, path string, n int) {
	ctx := context.Background()
	os.MkdirAll(filepath.Dir(path), 0o700)
	s, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	repo, err := s.AddRepository(ctx, "octo/plans", "")
	s.Close()
	if err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMilli()
	for i := range n {
		id := store.ChannelID(repo.NodeID, uuid.NewString())
		title := fmt.Sprintf("Implementation plan %05d", i)
		slug := store.Slug(title)
		if _, err := tx.Exec(`INSERT INTO channels (id, repository_node_id, title, title_key, slug, search_text,
			created_at, updated_at, creation_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'browser')`,
			id, repo.NodeID, title, strings.ToLower(title), slug, strings.ToLower(title), now+int64(i), now+int64(i)); err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO channel_slugs VALUES (?, ?, ?, ?)`, repo.NodeID, slug, id, now); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}
