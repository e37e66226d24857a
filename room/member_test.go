package room

import (
	"context"
	"slices"
	"strconv"
	"testing"
)

// A member's frames: one who may only read changes nothing, and no
// browser may pass its edits off as the server's.

func TestReadOnlyMemberChangesNothing(t *testing.T) {
	p := newFaultPersister()
	fr := newFaultRoom(t, p)
	fr.ask()
	card := fr.openCard()
	reader := &recConn{}
	m, err := fr.hub.Join(context.Background(), fr.channel, Identity{Login: "bo", Name: "Bo"}, reader)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave()
	reader.take()
	fr.actorC.take()
	fr.watchC.take()
	before := roomState(t, fr.room)
	p.set(0, "")
	for _, frame := range []string{
		`{"type":"plan:push","id":"x","version":` + strconv.FormatInt(before.Version, 10) + `,"updates":[{"clientID":"tab","changes":[` + strconv.Itoa(len(before.Source)) + `,[0,"x"]]}]}`,
		`{"type":"chat:send","id":"x","text":"Hello"}`,
		`{"type":"decision:answer","id":"x","decision":"` + card + `","answer":{"yes":true}}`,
		`{"type":"decision:cancel","id":"x","decision":"` + card + `"}`,
	} {
		m.Receive(context.Background(), []byte(frame))
		got := reader.take()
		if len(got) != 1 || got[0]["type"] != "error" || got[0]["code"] != CodeReadOnly || got[0]["id"] != "x" {
			t.Errorf("%s from a reader: %v", frame, got)
		}
	}
	if seen := fr.watchC.take(); len(seen) > 0 {
		t.Errorf("a reader's frames were shown: %v", types(seen))
	}
	if p.writes != 0 {
		t.Errorf("a reader's frames made %d writes", p.writes)
	}
	if after := roomState(t, fr.room); after.Version != before.Version || !slices.Equal(after.Decisions, before.Decisions) || len(after.Messages) != len(before.Messages) {
		t.Errorf("a reader changed the room:\nbefore %+v\n after %+v", before, after)
	}
}

func TestPushCannotClaimToBeTheServer(t *testing.T) {
	fr := newFaultRoom(t, newFaultPersister())
	v, n := fr.room.Plan().Version, len(fr.room.Plan().Source)
	for _, id := range []string{"server", "planner", ""} {
		got := fr.send(`{"type":"plan:push","id":"x","version":` + strconv.FormatInt(v, 10) + `,"updates":[{"clientID":"` + id + `","changes":[` + strconv.Itoa(n) + `,[0,"x"]]}]}`)
		if len(got) != 1 || got[0]["code"] != CodeMalformed {
			t.Errorf("a push with clientID %q: %v", id, got)
		}
	}
	if fr.room.Plan().Version != v {
		t.Error("the plan moved")
	}
}
