package app

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// modelEdit is one change as the model keeps it, on plain strings: at
// rune pos, del replaced by ins.
type modelEdit struct {
	pos      int
	del, ins []rune
}

// units is the UTF-16 length of rs.
func units(rs []rune) int {
	n := len(rs)
	for _, r := range rs {
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// changeJSON is e as a CodeMirror ChangeSet for text.
func (e modelEdit) changeJSON(text []rune) json.RawMessage {
	var parts []any
	if p := units(text[:e.pos]); p > 0 {
		parts = append(parts, p)
	}
	parts = append(parts, []any{units(e.del), string(e.ins)})
	if rest := units(text[e.pos+len(e.del):]); rest > 0 {
		parts = append(parts, rest)
	}
	js, _ := json.Marshal(parts)
	return js
}

// apply is text with e made.
func (e modelEdit) apply(text []rune) []rune {
	out := append([]rune{}, text[:e.pos]...)
	out = append(out, e.ins...)
	return append(out, text[e.pos+len(e.del):]...)
}

// modelRevert is what reverting edits[v] does to the model's text now:
// the edit that undoes it, where it has moved to, or the first later
// version in its way. The rules are the server's (docs/http-api.md):
// a later edit is in the way when it deletes or replaces any of the text
// v inserted, or inserts inside it or right at its edges (the model's
// text has no line breaks to separate them), or, where v only deleted,
// inserts at that place or deletes across it.
func modelRevert(edits map[int64]modelEdit, v, now int64) (modelEdit, int64) {
	e := edits[v]
	a, b := e.pos, e.pos+len(e.ins)
	for k := v + 1; k <= now; k++ {
		l := edits[k]
		c, d := l.pos, l.pos+len(l.del)
		var hit bool
		if a == b {
			hit = c <= a && a <= d && (c == d || c < a && a < d || len(l.ins) > 0)
		} else {
			hit = c < b && d > a || len(l.ins) > 0 && (d == a || c == b)
		}
		if hit {
			return modelEdit{}, k
		}
		if d <= a && !(a == b && c == a) { // before it: it moves
			shift := len(l.ins) - (d - c)
			a, b = a+shift, b+shift
		}
	}
	return modelEdit{pos: a, del: e.ins, ins: e.del}, 0
}

// TestRevertProperty is the property: random edits by several authors (a
// tab typing over the room's socket, Planner turns and an MCP client
// through the room), then every change reverted in a random order where
// the rules allow, checked against a model that applies the same edits to
// plain strings and says which reverts later edits are in the way of (the
// server must refuse those, naming the first of them); then every version
// restored, each equal to the model's text at it.
func TestRevertProperty(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { revertProperty(t, seed) })
	}
}

func revertProperty(t *testing.T, seed uint64) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Model")
	tab := ta.DialRoom(ch.ID)
	tab.OpenPlan()
	rng := rand.New(rand.NewPCG(seed, 31))

	// Every character typed is new, a CJK character or one outside the
	// BMP (two UTF-16 units): the server's comparison of two texts then
	// finds exactly the edit the model made, and offsets are checked in
	// UTF-16.
	fresh := 0
	newRunes := func(n int) []rune {
		out := make([]rune, n)
		for i := range out {
			fresh++
			if fresh%4 == 0 {
				out[i] = rune(0x20000 + fresh)
			} else {
				out[i] = rune(0x4E00 + fresh)
			}
		}
		return out
	}
	version, src := ta.source(t, ch.ID)
	text := []rune(src)
	prefix := len(text) // "# Model\n": never edited
	texts := map[int64]string{version: src}
	edits := map[int64]modelEdit{}
	turn := 0
	planner := room.Author{Kind: room.AuthorPlanner, Turn: "turn-0", Model: "qwen"}
	mcp := room.Author{Kind: room.AuthorMCP, Name: "codex"}

	commit := func(e modelEdit, next int64) {
		t.Helper()
		if next != version+1 {
			t.Fatalf("version %d after %d", next, version)
		}
		text = e.apply(text)
		version = next
		edits[version], texts[version] = e, string(text)
	}
	for range 100 {
		pos := prefix + rng.IntN(len(text)-prefix+1)
		del := 0
		if n := len(text) - pos; n > 0 && rng.IntN(3) > 0 {
			del = rng.IntN(min(3, n) + 1)
		}
		ins := rng.IntN(4)
		if del == 0 && ins == 0 {
			ins = 1
		}
		e := modelEdit{pos: pos, del: append([]rune{}, text[pos:pos+del]...), ins: newRunes(ins)}
		switch k := rng.IntN(10); {
		case k < 5: // a person types in a tab
			commit(e, tabPush(t, tab, version, e.changeJSON(text)))
		case k < 8: // the Planner, in turns of a few edits
			if rng.IntN(3) == 0 {
				turn++
				planner.Turn = fmt.Sprint("turn-", turn)
			}
			commit(e, ta.serverEdit(t, ch.ID, planner, string(e.apply(text))))
			tab.Until("plan:updates")
		default: // an MCP client
			commit(e, ta.serverEdit(t, ch.ID, mcp, string(e.apply(text))))
			tab.Until("plan:updates")
		}
	}

	// Every change reverted in a random order, then every revert.
	reverted, refused := 0, 0
	var targets []int64
	original := version
	for _, i := range rng.Perm(int(version)) {
		targets = append(targets, int64(i+1))
	}
	for i := 0; i < len(targets); i++ {
		v := targets[i]
		want, inTheWay := modelRevert(edits, v, version)
		r := ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/revert", ch.ID, v), nil)
		if inTheWay > 0 {
			apptest.Want(t, r, 409, "revert-conflict")
			var rc revertConflict
			r.JSON(t, &rc)
			if len(rc.Conflicts) == 0 || rc.Conflicts[0].Version != inTheWay {
				t.Fatalf("revert of %d: conflicts %+v, the model says %d is in the way first", v, rc.Conflicts, inTheWay)
			}
			refused++
			continue
		}
		apptest.Want(t, r, 200, "")
		var plan room.Plan
		r.JSON(t, &plan)
		if got := string(want.del); string(text[want.pos:want.pos+len(want.del)]) != got {
			t.Fatalf("the model's undo of %d does not find its text", v)
		}
		commit(want, plan.Revision)
		if v <= original {
			targets = append(targets, version) // the revert, to be reverted in turn
		}
		tab.Until("plan:updates")
		if plan.Source != string(text) {
			t.Fatalf("revert of %d:\n got %q\nwant %q", v, plan.Source, string(text))
		}
		reverted++
	}
	if reverted == 0 || refused == 0 {
		t.Fatalf("%d reverted and %d refused: the property was not exercised", reverted, refused)
	}
	t.Logf("seed %d: %d versions, %d reverted, %d refused, %d characters at the end", seed, version, reverted, refused, len(text))

	// Every version restored, newest first.
	for v := version; v >= 0; v -= 1 + int64(rng.IntN(2)) {
		var plan room.Plan
		r := ta.Do("POST", fmt.Sprintf("/api/channels/%s/versions/%d/restore", ch.ID, v), nil)
		apptest.Want(t, r, 200, "")
		r.JSON(t, &plan)
		if plan.Source != texts[v] {
			t.Fatalf("restore of %d:\n got %q\nwant %q", v, plan.Source, texts[v])
		}
	}
}
