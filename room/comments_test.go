package room

// Comment anchors against a model that knows where every character came
// from: random edits around and inside a passage, and after each one the
// mapped anchor must cover every surviving character of the passage and
// nothing that was outside it, read as its quote exactly when it says so,
// and be orphaned only when none of the passage is left.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// taggedChar is a character of the model: its origin is its index in the
// starting text, or -1 for a character typed since.
type taggedChar struct {
	r      rune
	origin int
}

func modelText(m []taggedChar) string {
	var b strings.Builder
	for _, c := range m {
		b.WriteRune(c.r)
	}
	return b.String()
}

// changeJSON is the CodeMirror JSON of one edit: delete [at, at+del) and
// insert ins there, in a document of n units (every rune here is one unit).
func changeJSON(n, at, del int, ins string) []byte {
	var secs []any
	if at > 0 {
		secs = append(secs, at)
	}
	rep := []any{del}
	for _, l := range strings.Split(ins, "\n") {
		rep = append(rep, l)
	}
	if ins == "" {
		rep = []any{del}
	}
	secs = append(secs, rep)
	if rest := n - at - del; rest > 0 {
		secs = append(secs, rest)
	}
	b, _ := json.Marshal(secs)
	return b
}

func TestCommentAnchorFollowsRandomEdits(t *testing.T) {
	const start = "# Plan\n\nWe ship the rocket in May.\n\nUse Postgres for everything, and\nkeep backups daily.\n\n## Risks\n\nNone yet.\n"
	const quote = "Postgres for everything, and\nkeep backups"
	rng := rand.New(rand.NewPCG(19, 2026))
	words := []string{"x", "é", "new ", "\n", "\n\n", "Postgres", "for everything", " ", "ünïcode"}
	var counts = map[string]int{}
	for run := 0; run < 100; run++ {
		var model []taggedChar
		for i, r := range []rune(start) {
			model = append(model, taggedChar{r, i})
		}
		qFrom := strings.Index(start, quote) // ASCII before it: bytes are units
		qTo := qFrom + len(quote)
		p := Passage{From: qFrom, To: qTo, Quote: quote, State: AnchorExact}
		for step := 0; step < 100; step++ {
			n := len(model)
			// Edits cluster around and inside the passage.
			var at int
			if p.State != AnchorOrphaned && rng.IntN(4) > 0 {
				at = max(0, min(n, p.From-3+rng.IntN(p.To-p.From+7)))
			} else {
				at = rng.IntN(n + 1)
			}
			del := 0
			if n-at > 0 && rng.IntN(3) > 0 {
				del = rng.IntN(min(n-at, 1+rng.IntN(20)) + 1)
			}
			ins := ""
			if rng.IntN(3) > 0 || del == 0 {
				ins = words[rng.IntN(len(words))]
			}
			if del == 0 && ins == "" || n-del+len([]rune(ins)) == 0 {
				continue
			}
			cs, err := ParseChangeSet(changeJSON(n, at, del, ins))
			if err != nil {
				t.Fatal(err)
			}
			var added []taggedChar
			for _, r := range ins {
				added = append(added, taggedChar{r, -1})
			}
			before := modelText(model)
			model = append(append(append([]taggedChar{}, model[:at]...), added...), model[at+del:]...)
			text := modelText(model)
			if got, err := cs.Apply(before); err != nil || got != text {
				t.Fatalf("the test's change does not make its own text: %v %q", err, got)
			}
			// As mapLocked does: only a touched passage is read again.
			if touched, _ := mapPassage(&p, cs); touched {
				refreshPassage(&p, text)
			}
			checkAnchor(t, run, step, model, p, qFrom, qTo, quote)
			counts[p.State]++
			if t.Failed() {
				return
			}
		}
	}
	t.Logf("anchor states over 10000 edits: %v", counts)
	for _, s := range []string{AnchorExact, AnchorChanged, AnchorOrphaned} {
		if counts[s] == 0 {
			t.Errorf("no edit left the anchor %s: the walk does not exercise it", s)
		}
	}
}

// checkAnchor compares p with what the model knows.
func checkAnchor(t *testing.T, run, step int, model []taggedChar, p Passage, qFrom, qTo int, quote string) {
	t.Helper()
	inPassage := func(c taggedChar) bool { return c.origin >= qFrom && c.origin < qTo }
	survivors := 0
	first, last := -1, -1
	for i, c := range model {
		if inPassage(c) {
			survivors++
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	where := func() string { return modelText(model) }
	if p.State == AnchorOrphaned {
		if survivors > 0 {
			t.Errorf("run %d step %d: orphaned with %d characters of the passage left in\n%q", run, step, survivors, where())
		}
		return
	}
	if p.From < 0 || p.To > len(model) || p.From >= p.To {
		t.Errorf("run %d step %d: anchor %d-%d outside a text of %d", run, step, p.From, p.To, len(model))
		return
	}
	for i := p.From; i < p.To; i++ {
		if c := model[i]; c.origin >= 0 && !inPassage(c) {
			t.Errorf("run %d step %d: anchor %d-%d covers %q from outside the passage in\n%q", run, step, p.From, p.To, c.r, where())
			return
		}
	}
	if survivors > 0 && (first < p.From || last >= p.To) {
		t.Errorf("run %d step %d: anchor %d-%d leaves out passage characters at %d-%d in\n%q", run, step, p.From, p.To, first, last, where())
	}
	got := modelText(model[p.From:p.To])
	if (got == quote) != (p.State == AnchorExact) {
		t.Errorf("run %d step %d: state %s but the anchor reads %q", run, step, p.State, got)
	}
}

// memComments is an in-memory CommentStore, with the in-memory plan store
// its placements commit to: together, a document's database, which
// outlives the hubs opened over it.
type memComments struct {
	mu      sync.Mutex
	threads map[string]Thread
	order   []string
	p       *memPersister
}

func newMemComments() *memComments {
	return &memComments{threads: map[string]Thread{}, p: newMemPersister()}
}

func (m *memComments) Threads(_ context.Context, id string) ([]Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Thread
	for _, k := range m.order {
		if t := m.threads[k]; t.ChannelID == id {
			out = append(out, t)
		}
	}
	return out, nil
}

func (m *memComments) SaveThreads(ctx context.Context, id string, ts []Thread, placement []Update) error {
	if len(placement) > 0 {
		if err := m.p.CommitPlan(ctx, id, placement); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range ts {
		if _, ok := m.threads[t.ID]; !ok {
			m.order = append(m.order, t.ID)
		}
		t.ChannelID = id
		m.threads[t.ID] = t
	}
	return nil
}

// TestCommentAnchorsAfterCrash: a room that stops without its final
// checkpoint (a crash) stored its anchors at the last checkpoint; the next
// one moves them through the journal to where they were.
func TestCommentAnchorsAfterCrash(t *testing.T) {
	mc := newMemComments()
	_, r, release := openCommentDoc(t, mc)
	defer release()
	th := postgresThread(t, r)
	// Enough edits before the passage for a checkpoint and a journal after it.
	typeBefore(t, r, checkpointEvery+37)
	want := r.Threads()[0].Passage
	if want.From != th.Passage.From+checkpointEvery+37 || want.State != AnchorExact {
		t.Fatalf("before the crash %+v", want)
	}
	mc.mu.Lock()
	stored := mc.threads[th.ID].Passage.Version
	mc.mu.Unlock()
	if stored == r.Plan().Version {
		t.Fatalf("the anchor was stored at every edit (version %d): nothing to recover", stored)
	}
	// The next process, without closing this one.
	_, r2, release2 := openCommentDoc(t, mc)
	defer release2()
	if got := r2.Threads()[0].Passage; !reflect.DeepEqual(got, want) {
		t.Errorf("after the crash %+v\nwant %+v", got, want)
	}
}

// openCommentDoc opens the document "doc" in a new hub over mc, as a
// process that starts does.
func openCommentDoc(t testing.TB, mc *memComments) (*Hub, *Room, func()) {
	t.Helper()
	h := NewHub(Options{Persister: mc.p, Comments: mc})
	r, release, err := h.Acquire(context.Background(), Channel{ID: "doc", Title: "Plan"})
	if err != nil {
		t.Fatal(err)
	}
	return h, r, release
}

// postgresThread gives the room a short plan and a thread on its word
// "Postgres".
func postgresThread(t testing.TB, r *Room) Thread {
	t.Helper()
	if _, err := r.ReplaceText(context.Background(), r.Plan().Version, "# Plan\n\nUse Postgres for everything.\n"); err != nil {
		t.Fatal(err)
	}
	th, err := r.StartThread(context.Background(), Identity{Login: "ada"}, threadOn(r, "Postgres", "Why?"))
	if err != nil {
		t.Fatal(err)
	}
	return th
}

// typeBefore pushes n one-character edits at the plan's third character,
// before any passage after its first line.
func typeBefore(t testing.TB, r *Room, n int) {
	t.Helper()
	for range n {
		units := UTF16Len(r.Plan().Source)
		if _, err := r.Push(context.Background(), r.Plan().Version, []Update{{ClientID: "t", Changes: changeJSON(units, 2, 0, "x")}}); err != nil {
			t.Fatal(err)
		}
	}
}

func newCommentRoom(t testing.TB, source string) (*Room, *memComments) {
	t.Helper()
	mc := newMemComments()
	_, r, release := openCommentDoc(t, mc)
	t.Cleanup(release)
	if _, err := r.ReplaceText(context.Background(), 0, source); err != nil {
		t.Fatal(err)
	}
	return r, mc
}

// threadOn is a NewThread on the first occurrence of quote in the plan.
func threadOn(r *Room, quote, text string) NewThread {
	plan := r.Plan()
	i := strings.Index(plan.Source, quote)
	line := strings.Count(plan.Source[:i], "\n") + 1
	var refs []BlockRef
	for _, b := range plan.Blocks {
		if b.StartLine <= line && line <= b.EndLine {
			refs = append(refs, BlockRef{Index: b.Index, Digest: b.Digest})
		}
	}
	from := UTF16Len(plan.Source[:i])
	return NewThread{Version: plan.Version, Blocks: refs, From: from, To: from + UTF16Len(quote), Quote: quote, Text: text}
}

// TestCommentBounds: notes per thread, open threads per document, a
// passage's size, and where a passage may lie.
func TestCommentBounds(t *testing.T) {
	ctx := context.Background()
	ada := Identity{Login: "ada"}
	r, _ := newCommentRoom(t, "# Plan\n\nUse Postgres.\n")
	th, err := r.StartThread(ctx, ada, threadOn(r, "Postgres", "Why?"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < MaxCommentNotes; i++ {
		if _, err := r.ReplyThread(ctx, ada, th.ID, "more"); err != nil {
			t.Fatal(err)
		}
	}
	wantCode := func(err error, code string) {
		t.Helper()
		var re *Error
		if !asError(err, &re) || re.Code != code {
			t.Errorf("got %v, want %s", err, code)
		}
	}
	_, err = r.ReplyThread(ctx, ada, th.ID, "one too many")
	wantCode(err, CodeThreadFull)
	_, err = r.ReplyThread(ctx, ada, th.ID, "")
	wantCode(err, CodeInvalidArgument)
	for i := 1; i < MaxOpenThreads; i++ {
		if _, err := r.StartThread(ctx, ada, threadOn(r, "Postgres", "again")); err != nil {
			t.Fatal(err)
		}
	}
	_, err = r.StartThread(ctx, ada, threadOn(r, "Postgres", "one too many"))
	wantCode(err, CodeTooManyThreads)
	// Dismissing one makes room.
	if _, err := r.DismissThread(ctx, ada, th.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartThread(ctx, ada, threadOn(r, "Postgres", "now it fits")); err != nil {
		t.Error(err)
	}

	r2, _ := newCommentRoom(t, "# Plan\n\n"+strings.Repeat("a", MaxPassageBytes+1)+"\n\nShip it.\n")
	_, err = r2.StartThread(ctx, ada, threadOn(r2, strings.Repeat("a", MaxPassageBytes+1), "long"))
	wantCode(err, CodePassageTooLarge)
	// Accepted with no Planner: the record is written, and is no passage.
	acc, err := r2.StartThread(ctx, ada, threadOn(r2, "Ship it.", "When?"))
	if err != nil {
		t.Fatal(err)
	}
	if acc, err = r2.AcceptThread(ctx, ada, acc.ID); err != nil || acc.Result.State != ResultNoPlan {
		t.Fatalf("accept %+v %v", acc, err)
	}
	mark := `<Comment id="` + acc.ID + `" />`
	if !strings.HasSuffix(r2.Plan().Source, "Ship it.\n\n"+mark+"\n") {
		t.Errorf("plan %q", r2.Plan().Source)
	}
	_, err = r2.StartThread(ctx, ada, threadOn(r2, mark, "the record"))
	wantCode(err, CodeInvalidPassage)
	blank := threadOn(r2, "\n\n", "blank")
	_, err = r2.StartThread(ctx, ada, blank)
	wantCode(err, CodeInvalidPassage)
}

// BenchmarkCommentAnchorMapping measures moving 200 open threads' anchors
// through one typed character (what every push adds for them), beside
// applying that character to the same 110 KB plan (what every push does
// anyway), in the same run.
func BenchmarkCommentAnchorMapping(b *testing.B) {
	source := "# Plan\n\n" + strings.Repeat("Use Postgres for everything, and keep backups daily.\n\n", 2000)
	n := UTF16Len(source)
	u := Update{Version: 1, ClientID: "t", Changes: changeJSON(n, 2, 0, "x")}
	b.Run("apply", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := applyUpdate(source, u); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("anchors=200", func(b *testing.B) {
		r, _ := newCommentRoom(b, "# Plan\n")
		r.plan.text = source
		var c comments
		for i := 0; i < MaxOpenThreads; i++ {
			from := 10 + 54*i*5
			c.threads = append(c.threads, &Thread{ID: fmt.Sprint(i), Status: ThreadOpen,
				Passage: Passage{From: from, To: from + 8, Quote: "Postgres", State: AnchorExact}})
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c.mapLocked(r, []Update{u}, nil)
		}
	})
}

// TestCommentAnchorsAcrossKeptHistory: an anchor last stored before the
// checkpoint (its write failed, say) is moved through the journal's kept
// history, which a room reads back from the database only when needed.
func TestCommentAnchorsAcrossKeptHistory(t *testing.T) {
	mc := newMemComments()
	h, r, release := openCommentDoc(t, mc)
	th := postgresThread(t, r)
	// Fewer edits than the journal keeps, then the room closes (its final
	// checkpoint): every edit is history before the checkpoint.
	const edits = keepUpdates - 10
	typeBefore(t, r, edits)
	want := r.Threads()[0].Passage
	release()
	h.Close() // waits for the room's close and its final checkpoint
	if want.From != th.Passage.From+edits || want.State != AnchorExact {
		t.Fatalf("before closing %+v", want)
	}
	// The anchor as it was stored when the thread began.
	mc.mu.Lock()
	stored := mc.threads[th.ID]
	stored.Passage = th.Passage
	mc.threads[th.ID] = stored
	mc.mu.Unlock()
	_, r2, release2 := openCommentDoc(t, mc)
	defer release2()
	if got := r2.Threads()[0].Passage; !reflect.DeepEqual(got, want) {
		t.Errorf("after reopening %+v\nwant %+v", got, want)
	}
}
