package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/room"
	"github.com/chopin-desktop/chopin/store"
)

// BenchmarkLocatePassage measures finding, now, a passage referenced
// 10,000 changes ago: a plan of about 50 KB, the passage in its middle,
// then 10,000 keystrokes committed by a tab, half of them before the
// passage. Each iteration reads the changes since from the history and
// maps the passage through them, as Chat's chip and read_reference do.
// The sub-benchmark "pruned" finds it by its block's digest once that
// history is pruned to one snapshot.
func BenchmarkLocatePassage(b *testing.B) {
	const changes, batch = 10_000, 50
	ta := startApp(b)
	ta.AddRepository("octo/plans")
	launch := ta.CreateDocument("octo/plans", "Launch plan")
	here := ta.CreateDocument("octo/plans", "Rollout")
	var sb strings.Builder
	for i := 0; sb.Len() < 50_000; i++ {
		fmt.Fprintf(&sb, "## Section %d\n\nA paragraph of the plan that says what this part is about, line %d.\n\n", i, i)
	}
	text := sb.String()
	r := ta.Do("PUT", "/api/channels/"+launch.ID+"/plan", map[string]any{"revision": 0, "source": text})
	if r.Status != 200 {
		b.Fatalf("PUT plan: %d %s", r.Status, r.Body)
	}
	target := "A paragraph of the plan that says what this part is about, line 200."
	from := strings.Index(text, target)
	r = ta.Do("POST", "/api/channels/"+here.ID+"/messages", map[string]any{"text": "See",
		"references": []any{map[string]any{"kind": "passage", "channelId": launch.ID, "from": from, "to": from + len(target)}}})
	if r.Status != 201 {
		b.Fatalf("POST message: %d %s", r.Status, r.Body)
	}
	var m room.Message
	r.JSON(b, &m)
	ref := room.MessageReferences(m)[0]

	tab := ta.DialRoom(launch.ID)
	version := int64(1)
	for i := 0; i < changes; i += batch {
		var updates []any
		for j := range batch {
			pos := 10 // before the passage
			if (i+j)%2 == 1 {
				pos = len(text) - 10 // after it
			}
			updates = append(updates, map[string]any{"clientID": "tab-1", "changes": replaceAt(pos, 0, len(text), "e")})
			text = text[:pos] + "e" + text[pos:]
		}
		id := fmt.Sprintf("p%d", version)
		tab.Send(map[string]any{"type": "plan:push", "id": id, "version": version, "updates": updates})
		for {
			f := tab.Next()
			if f["type"] == "error" && f["id"] == id {
				b.Fatalf("push at %d: %v", version, f)
			}
			if f["type"] == "plan:ack" && f["id"] == id {
				version = int64(f["version"].(float64))
				break
			}
		}
	}
	ctx := context.Background()
	rc := func(ch store.Channel) room.Channel { return ta.app.roomChannel(ch) }
	check := func(b *testing.B, found string) {
		now, err := locatePassage(ctx, ta.app.store, ta.app.hub, ref, rc)
		if err != nil || now.State != room.AnchorExact || now.Found != found || now.Text != target {
			b.Fatalf("located %+v, %v; want it %s, at %q", now, err, found, target)
		}
	}
	b.Run("history", func(b *testing.B) {
		check(b, room.FoundByHistory)
		b.ResetTimer()
		for range b.N {
			check(b, room.FoundByHistory)
		}
	})
	b.Run("pruned", func(b *testing.B) {
		prune := store.HistoryPrune{Through: version, Keep: []int64{version}, Snapshots: map[int64]string{version: text}}
		if err := ta.app.store.PruneHistory(ctx, launch.ID, prune); err != nil {
			b.Fatal(err)
		}
		check(b, room.FoundByBlock)
		b.ResetTimer()
		for range b.N {
			check(b, room.FoundByBlock)
		}
	})
}
