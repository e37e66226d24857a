package app

import (
	"context"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

// TestMessageReferences: a message sent on /ws refers to documents by ID;
// Chat keeps each with its title, revision and plan digest then, in the
// same order, once each, across a rename and a restart; the referenced
// document lists who refers to it; bad references are refused and keep
// nothing.
func TestMessageReferences(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	ta := startAppWith(t, cfg)
	ta.AddRepository("octo/plans")
	launch := ta.CreateDocument("octo/plans", "Launch plan")
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+launch.ID+"/plan", map[string]any{"revision": 0, "source": "# Launch plan\n\nShip.\n"}), 200, "")
	budget := ta.CreateDocument("octo/plans", "Budget")
	here := ta.CreateDocument("octo/plans", "Rollout")
	tab := ta.DialRoom(here.ID)

	ref := func(id string) map[string]any { return map[string]any{"kind": "document", "channelId": id} }
	tab.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "See #Launch plan and #Budget",
		"references": []any{ref(launch.ID), ref(budget.ID), ref(launch.ID)}})
	msg := tab.Until("chat:message")["message"].(map[string]any)
	want := []room.Reference{
		{Kind: "document", ChannelID: launch.ID, Label: "Launch plan", ObservedRevision: 1, ObservedSourceHash: room.Digest("# Launch plan\n\nShip.\n")},
		{Kind: "document", ChannelID: budget.ID, Label: "Budget", ObservedRevision: 0, ObservedSourceHash: room.Digest(budgetSource(t, ta, budget.ID))},
	}
	wantReferences(t, msg, want)

	// Renamed, the document is still the one referred to; Chat keeps the
	// label it had, and the UI shows its current title by its ID.
	apptest.Want(t, ta.Do("PATCH", "/api/channels/"+launch.ID, map[string]any{"title": "Go-live plan"}), 200, "")
	var by struct{ ReferencedBy []struct{ ID, Title string } }
	ta.Do("GET", "/api/channels/"+launch.ID+"/referenced-by", nil).JSON(t, &by)
	if len(by.ReferencedBy) != 1 || by.ReferencedBy[0].ID != here.ID || by.ReferencedBy[0].Title != "Rollout" {
		t.Fatalf("referenced-by: %+v", by)
	}
	ta.Do("GET", "/api/channels/"+here.ID+"/referenced-by", nil).JSON(t, &by)
	if len(by.ReferencedBy) != 0 {
		t.Fatalf("a document nobody refers to: %+v", by)
	}

	// Refused, with the reason, and nothing kept.
	for _, tc := range []struct {
		refs []any
		code string
		text string
	}{
		{[]any{ref("0123456789abcdef01234567")}, "not-found", "No document has the ID 0123456789abcdef01234567"},
		{[]any{map[string]any{"kind": "passage", "channelId": launch.ID}}, "invalid-argument", `A reference to a passage needs its from and to`},
		{[]any{map[string]any{"kind": "section", "channelId": launch.ID}}, "invalid-argument", `A reference's kind is "document" or "passage"; "section" is not one.`},
		{[]any{ref(launch.ID), ref(budget.ID), ref(launch.ID), ref(budget.ID), ref(launch.ID), ref(budget.ID),
			ref(launch.ID), ref(budget.ID), ref(launch.ID), ref(budget.ID), ref(launch.ID)}, "invalid-argument", "at most 10 documents"},
	} {
		tab.Send(map[string]any{"type": "chat:send", "id": "bad", "text": "See", "references": tc.refs})
		e := tab.Until("error")
		if e["code"] != tc.code || !strings.Contains(e["message"].(string), tc.text) {
			t.Errorf("refs %v: %v, want %s %q", tc.refs, e, tc.code, tc.text)
		}
	}
	var msgs struct{ Messages []map[string]any }
	ta.Do("GET", "/api/channels/"+here.ID+"/messages", nil).JSON(t, &msgs)
	if len(msgs.Messages) != 1 {
		t.Fatalf("%d messages kept, want the one sent", len(msgs.Messages))
	}

	// After a restart Chat and the index hold the same.
	tab.Conn.Close()
	ta.Stop()
	ta = startAppWith(t, cfg)
	ta.Do("GET", "/api/channels/"+here.ID+"/messages", nil).JSON(t, &msgs)
	wantReferences(t, msgs.Messages[0], want)
	ta.Do("GET", "/api/channels/"+budget.ID+"/referenced-by", nil).JSON(t, &by)
	if len(by.ReferencedBy) != 1 || by.ReferencedBy[0].ID != here.ID {
		t.Fatalf("referenced-by after a restart: %+v", by)
	}
}

func budgetSource(t *testing.T, ta *testApp, id string) string {
	var plan struct{ Source string }
	ta.Do("GET", "/api/channels/"+id+"/plan", nil).JSON(t, &plan)
	return plan.Source
}

// wantReferences fails unless the message's details hold want, in order.
func wantReferences(t *testing.T, msg map[string]any, want []room.Reference) {
	t.Helper()
	details, _ := msg["details"].(map[string]any)
	got, _ := details["references"].([]any)
	if len(got) != len(want) {
		t.Fatalf("references %v, want %+v", details["references"], want)
	}
	for i, w := range want {
		g := got[i].(map[string]any)
		if g["kind"] != w.Kind || g["channelId"] != w.ChannelID || g["label"] != w.Label ||
			g["observedRevision"] != float64(w.ObservedRevision) || g["observedSourceHash"] != w.ObservedSourceHash {
			t.Errorf("reference %d: %v, want %+v", i, g, w)
		}
	}
}

// TestInvokePlannerReferences: MCP's invoke_planner refers to documents by
// id or by its path; the Planner's prompt lists them.
func TestInvokePlannerReferences(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("acme/rocket")
	spec := ta.CreateDocument("acme/rocket", "Engine spec")
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+spec.ID+"/plan", map[string]any{"revision": 0, "source": "# Engine spec\n\nThrust: 9 kN.\n"}), 200, "")
	doc := ta.CreateDocument("acme/rocket", "Invoked")
	cs := ta.mcpSession("codex")
	prompts := make(chan string, 2)
	ctx, cancel := context.WithTimeout(context.Background(), apptest.Wait)
	defer cancel()
	link, err := client.Dial(ctx, client.Config{URL: ta.AgentURL(), Token: ta.Token(), Document: doc.ID,
		Handler: client.Handler{Turn: func(_ context.Context, tn *client.Turn) error {
			prompts <- tn.Prompt()
			return tn.Text("On it.")
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()

	wantRefusal(t, callTool(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Compare.", "references": []string{"/documents/acme/rocket/no-such"}}), "document-unavailable")
	wantInvalidParams(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Compare.", "references": make([]string, 11)})
	wantRefusal(t, callTool(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Compare.", "references": []any{map[string]any{"id": spec.ID, "from": 0, "to": 9999}}}), "invalid-passage")
	wantInvalidParams(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Compare.", "references": []any{map[string]any{"id": spec.ID, "from": 15}}})
	wantInvalidParams(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Compare.", "references": []any{map[string]any{"id": spec.ID, "from": 15, "to": 28, "line": 3}}})
	wantOK(t, callTool(t, cs, "invoke_planner", map[string]any{"id": doc.ID, "instruction": "Compare with the spec.",
		"references": []any{"/documents/acme/rocket/engine-spec", map[string]any{"id": "/documents/acme/rocket/engine-spec", "from": 15, "to": 28}}}), "invoke_planner")
	if p := <-prompts; !strings.Contains(p, "@codex: Compare with the spec.\n\nThe message refers to other documents") ||
		!strings.Contains(p, "- “Engine spec” (id "+spec.ID+"), at revision ") ||
		!strings.Contains(p, "- a passage: line 3 of “Engine spec” (id "+spec.ID+"), under “Engine spec”, at revision 1 when referenced: “Thrust: 9 kN.”") {
		t.Fatalf("prompt: %q", p)
	}
}
