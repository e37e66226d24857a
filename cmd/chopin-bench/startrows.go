package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/chopin-desktop/chopin/store"
)

// startRows: from starting the process to its first 200 from /healthz,
// and to its first page (`/`, as a signed-in browser asks for it), for
// chopin on an empty database and on a large one (-start-docs documents
// with -start-mb of plans, Chat and pictures), each after a clean stop,
// in turn with the hello-world server's starts (one after each of
// chopin's); then chopin's start on the large database after a crash
// (kill -9), which checks the whole file; and the steps of a start as
// chopin's own start-up line logs them. Beside them, two floors under
// the first: startfloor (the hello-world server with every package chopin
// links, initialised, and the same database opened before it answers),
// which no start of a program made of these packages can beat; and the
// chopin binary started and run to its exit doing nothing (`chopin
// --version`), which is loading the executable, the Go runtime's start and
// every package's initialisation.
func (b *bench) startRows(ctx context.Context) ([]row, error) {
	emptyHome, largeHome := b.newHome("start"), b.newHome("start-large")
	dbPath := filepath.Join(largeHome.dataDir, "chopin.db")
	began := time.Now()
	content, err := seedLarge(ctx, dbPath, b.o.startDocs, int64(b.o.startMB)<<20)
	if err != nil {
		return nil, fmt.Errorf("seed the large database: %w", err)
	}
	size := fileSize(dbPath)
	fmt.Fprintf(b.log, "seeded %d documents, %s of content, a %s file, in %s\n",
		b.o.startDocs, mbText(content), mbText(size), time.Since(began).Round(time.Millisecond))
	empty := &startSeries{home: emptyHome}
	large := &startSeries{home: largeHome, what: fmt.Sprintf("%s documents, %s file", thousands(b.o.startDocs), mbText(size))}
	for _, s := range []*startSeries{empty, large} {
		// The first start makes the database and the token (or checks the
		// seeded database whole); a browser signs in for the first pages.
		first, err := b.startChopin(ctx, s.home)
		if err != nil {
			return nil, err
		}
		s.page = &http.Client{Jar: first.browser.Jar, Timeout: 10 * time.Second}
		first.stop()
	}
	var hello, bare []time.Duration
	for range b.o.starts {
		start := time.Now()
		if out, err := exec.CommandContext(ctx, b.chopin, "--version").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("chopin --version: %v: %s", err, out)
		}
		bare = append(bare, time.Since(start))
		for _, s := range []*startSeries{empty, large} {
			took, pageTook, line, err := b.startOnce(ctx, s.home, s.page, false)
			if err != nil {
				return nil, err
			}
			// (A binary from before the start-up line has none.)
			if strings.Contains(line, "whole_check=true") {
				return nil, fmt.Errorf("a start after a clean stop checked the whole database: %q", line)
			}
			s.healthz, s.pages, s.logs = append(s.healthz, took), append(s.pages, pageTook), append(s.logs, line)
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			p, took, err := startProc(ctx, b.hello, nil, append(os.Environ(), "PORT="+strconv.Itoa(port)), port)
			if err != nil {
				return nil, err
			}
			p.stop()
			hello = append(hello, took)
			if port, err = freePort(); err != nil {
				return nil, err
			}
			p, took, err = startProc(ctx, b.floor, nil, append(os.Environ(), "PORT="+strconv.Itoa(port),
				"DB="+filepath.Join(s.home.dataDir, "chopin.db")), port)
			if err != nil {
				return nil, err
			}
			p.stop()
			s.floor = append(s.floor, took)
		}
	}
	crashed, err := b.crashStarts(ctx, largeHome)
	if err != nil {
		return nil, err
	}

	h := percentile(hello, 50)
	helloText := msText(h) + " (hello world)"
	var rows []row
	for _, s := range []*startSeries{empty, large} {
		on := "empty database"
		if s.what != "" {
			on = s.what
		}
		c, p := percentile(s.healthz, 50), percentile(s.pages, 50)
		rows = append(rows,
			row{"start", "start to first `/healthz`, " + on + ", median", msText(c), helloText,
				ratioText(float64(c), float64(h)), "under 2×", met(float64(c) < 2*float64(h))},
			row{"start", "start to first page (`/`, signed in), " + on + ", median", msText(p), msText(h) + " (hello world's `/healthz`)",
				ratioText(float64(p), float64(h)), "under 2×", met(float64(p) < 2*float64(h))})
	}
	for _, s := range []*startSeries{empty, large} {
		on := "the empty database"
		if s.what != "" {
			on = s.what
		}
		f := percentile(s.floor, 50)
		rows = append(rows, row{"start", "the floor under those: hello world with every package chopin links and its database opened (`startfloor`), " +
			on + ", median", msText(f), helloText, ratioText(float64(f), float64(h)), "-", ""})
	}
	steps := large.steps()
	c := percentile(crashed, 50)
	f := percentile(bare, 50)
	fmt.Fprintf(b.log, "start-up steps, empty: %s\nstart-up steps, large: %s\n", empty.steps().all(), steps.all())
	for _, s := range []*startSeries{empty, large} {
		for _, line := range s.logs {
			fmt.Fprintf(b.log, "%s\n", line)
		}
	}
	return append(rows,
		row{"start", fmt.Sprintf("start to first `/healthz` after a crash (kill -9): the whole check, %s, median of %d", large.what, len(crashed)),
			msText(c), helloText, ratioText(float64(c), float64(h)), "-", ""},
		row{"start", "the start's own steps, New to serving (its log line), " + large.what + ", median; " + steps.largest(3),
			msText(steps.total), "-", "-", "-", ""},
		row{"start", "the binary alone, start to exit (`chopin --version`), median", msText(f),
			msText(h) + " (hello world's `/healthz`)", ratioText(float64(f), float64(h)), "-", ""}), nil
}

// startSeries is one database's starts.
type startSeries struct {
	home    *chopinHome
	what    string       // the database, for the rows; "" when empty
	page    *http.Client // a signed-in browser
	healthz []time.Duration
	pages   []time.Duration // to the first page
	floor   []time.Duration // startfloor's starts on the same database
	logs    []string        // chopin's start-up lines
}

// startOnce starts chopin on home, times its first /healthz and its first
// page, and stops it: cleanly, or with kill -9 when crash is set. It
// returns chopin's start-up log line.
func (b *bench) startOnce(ctx context.Context, home *chopinHome, page *http.Client, crash bool) (time.Duration, time.Duration, string, error) {
	port, err := freePort()
	if err != nil {
		return 0, 0, "", err
	}
	p, took, err := startProc(ctx, b.chopin, []string{"serve"}, append(home.env, "PORT="+strconv.Itoa(port)), port)
	if err != nil {
		return 0, 0, "", err
	}
	var pageTook time.Duration
	if page != nil {
		t0 := time.Now()
		resp, err := page.Get(p.origin + "/")
		if err != nil {
			p.stop()
			return 0, 0, "", fmt.Errorf("the first page: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			p.stop()
			return 0, 0, "", fmt.Errorf("the first page answered %s", resp.Status)
		}
		pageTook = took + time.Since(t0)
	}
	if crash {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	} else {
		p.stop()
	}
	return took, pageTook, startLine(p.stderr.String()), nil
}

// crashStarts kills chopin with kill -9 and times the next start, which
// reads the whole database, a few times; it stops the last one cleanly.
func (b *bench) crashStarts(ctx context.Context, home *chopinHome) ([]time.Duration, error) {
	if _, _, _, err := b.startOnce(ctx, home, nil, true); err != nil {
		return nil, err
	}
	var took []time.Duration
	repeats := max(1, min(3, b.o.starts))
	for i := range repeats {
		d, _, line, err := b.startOnce(ctx, home, nil, i < repeats-1)
		if err != nil {
			return nil, err
		}
		if line != "" && !strings.Contains(line, "whole_check=true") {
			return nil, fmt.Errorf("a start after kill -9 did not check the whole database: %q", line)
		}
		took = append(took, d)
	}
	return took, nil
}

// startLine is the start-up line of a chopin log (msg=start-up).
func startLine(log string) string {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "msg=start-up ") {
			return line
		}
	}
	return ""
}

// startSteps are the medians of a series' start-up lines: the whole (took)
// and each step.
type startSteps struct {
	total time.Duration
	steps map[string]time.Duration
}

func (s *startSeries) steps() startSteps {
	all := map[string][]time.Duration{}
	for _, line := range s.logs {
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok || k == "time" || k == "before_new" {
				continue
			}
			if d, err := time.ParseDuration(v); err == nil {
				all[k] = append(all[k], d)
			}
		}
	}
	st := startSteps{steps: map[string]time.Duration{}}
	for k, ds := range all {
		if k == "took" {
			st.total = percentile(ds, 50)
		} else {
			st.steps[k] = percentile(ds, 50)
		}
	}
	return st
}

// all is every step's median, longest first.
func (st startSteps) all() string { return st.largest(len(st.steps)) }

// largest names the n longest steps with their medians.
func (st startSteps) largest(n int) string {
	names := make([]string, 0, len(st.steps))
	for k := range st.steps {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return int(st.steps[b] - st.steps[a]) })
	var parts []string
	for _, k := range names[:min(n, len(names))] {
		parts = append(parts, fmt.Sprintf("%s %.2f ms", k, float64(st.steps[k])/float64(time.Millisecond)))
	}
	if len(parts) == 0 {
		return "no start-up line"
	}
	return "largest " + strings.Join(parts, ", ")
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// seedLarge makes a database of docs documents in one repository holding
// about content bytes: 40% in plans (about 4 KB each at 100,000 documents
// and 1 GB), 30% in Chat (three messages a document) and 30% in pictures of
// 200 KB (random bytes: they are stored, never decoded, on the way to a
// start). Written straight into the tables through one connection, with
// SQLite's journal off and a 256 MiB page cache: through the API it would
// be hours of fsync'd commits. The database is left in WAL mode with no record of a clean
// stop, as a crash leaves it. It returns the content's bytes.
func seedLarge(ctx context.Context, path string, docs int, content int64) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, err
	}
	st, err := store.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	repo, err := st.AddRepository(ctx, "octo/large", "")
	st.Close()
	if err != nil {
		return 0, err
	}
	os.Remove(path + ".stopped")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)&_pragma=cache_size(-262144)&_pragma=temp_store(MEMORY)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	seed := &seeder{conn: conn, node: repo.NodeID, rng: rand.New(rand.NewPCG(1, 2))}
	planBytes := content * 4 / 10 / int64(docs)
	messageBytes := content * 3 / 10 / int64(docs) / 3
	const pictureBytes = 200 << 10
	pictures := int(content * 3 / 10 / pictureBytes)
	every := max(1, docs/max(1, pictures))
	const batch = 5000
	for from := 0; from < docs; from += batch {
		if err := seed.docs(ctx, from, min(docs, from+batch), int(planBytes), int(messageBytes), every, pictureBytes); err != nil {
			return 0, err
		}
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA journal_mode=WAL`); err != nil {
		return 0, err
	}
	return seed.bytes, nil
}

// seeder writes the large database's rows.
type seeder struct {
	conn  *sql.Conn
	node  string
	rng   *rand.Rand
	bytes int64
}

// planParagraphs are the plans' lines: each plan is its title and two of
// them repeated, so the plan-line index holds three lines a document (its
// size is not what a start reads).
var planParagraphs = []string{
	"We roll the change out in small, reversible steps, each behind a flag that can be turned off in a minute.",
	"Every step is measured against the baseline before the next one starts; a regression stops the rollout.",
	"The migration copies the data in batches of a thousand rows and checks each batch against its source.",
	"Owners review the plan before each milestone, and the decisions they make are recorded beside it.",
	"Monitoring alerts page the on-call engineer only for errors a person can act on, never for noise.",
}

// docs writes documents from to to (not included) in one transaction.
func (s *seeder) docs(ctx context.Context, from, to, planBytes, messageBytes, pictureEvery, pictureBytes int) error {
	tx, err := s.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	prep := func(q string) (*sql.Stmt, error) { return tx.PrepareContext(ctx, q) }
	stmts := make([]*sql.Stmt, 0, 7)
	for _, q := range []string{
		`INSERT INTO channels (id, repository_node_id, title, title_key, slug, search_text, created_at, updated_at, creation_source)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'browser')`,
		`INSERT INTO channel_slugs VALUES (?, ?, ?, ?)`,
		`INSERT INTO plans (channel_id, epoch, version, checkpoint_version, updated_at) VALUES (?, ?, 1, 1, ?)`,
		`INSERT INTO plan_texts (channel_id, source) VALUES (?, ?)`,
		`INSERT INTO channel_plan_lines (channel_id, line) VALUES (?, ?)`,
		`INSERT INTO messages (id, channel_id, seq, role, author, text, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		`INSERT INTO images (channel_id, sha256, ext, mime_type, width, height, size, data, created_at)
			VALUES (?, ?, 'png', 'image/png', 1200, 800, ?, ?, ?)`,
	} {
		st, err := prep(q)
		if err != nil {
			return err
		}
		defer st.Close()
		stmts = append(stmts, st)
	}
	channel, slugs, plan, text, lines, message, image := stmts[0], stmts[1], stmts[2], stmts[3], stmts[4], stmts[5], stmts[6]
	now := time.Now().UnixMilli()
	picture := make([]byte, pictureBytes)
	for i := from; i < to; i++ {
		title := fmt.Sprintf("Large plan %06d", i)
		id, slug, key := store.ChannelID(s.node, uuid.NewString()), store.Slug(title), strings.ToLower(title)
		at := now - int64(to-i)
		if _, err := channel.ExecContext(ctx, id, s.node, title, key, slug, key, at, at); err != nil {
			return err
		}
		if _, err := slugs.ExecContext(ctx, s.node, slug, id, at); err != nil {
			return err
		}
		a, b := planParagraphs[i%len(planParagraphs)], planParagraphs[(i+2)%len(planParagraphs)]
		var src strings.Builder
		src.WriteString("# " + title + "\n")
		for src.Len() < planBytes {
			src.WriteString("\n" + a + "\n\n" + b + "\n")
		}
		if _, err := plan.ExecContext(ctx, id, uuid.NewString(), at); err != nil {
			return err
		}
		if _, err := text.ExecContext(ctx, id, src.String()); err != nil {
			return err
		}
		for _, line := range []string{"# " + title, a, b} {
			if _, err := lines.ExecContext(ctx, id, line); err != nil {
				return err
			}
		}
		s.bytes += int64(src.Len())
		for m := range 3 {
			role, author := "person", "ada"
			if m == 1 {
				role, author = "planner", "Planner"
			}
			words := strings.Repeat(b+" ", max(1, messageBytes/(len(b)+1)))
			if _, err := message.ExecContext(ctx, uuid.NewString(), id, m+1, role, author, words, at, at); err != nil {
				return err
			}
			s.bytes += int64(len(words))
		}
		if i%pictureEvery == 0 {
			for j := 0; j < len(picture); j += 8 {
				v := s.rng.Uint64()
				for k := range min(8, len(picture)-j) {
					picture[j+k] = byte(v >> (8 * k))
				}
			}
			sum := sha256.Sum256(picture)
			if _, err := image.ExecContext(ctx, id, hex.EncodeToString(sum[:]), len(picture), picture, at); err != nil {
				return err
			}
			s.bytes += int64(len(picture))
		}
	}
	return tx.Commit()
}
