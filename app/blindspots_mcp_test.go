package app

// update_document on an archived document: refused as archived before the
// plan is looked at, with the tool that undoes it, so a model is not sent
// to fix a plan that could not be written anyway.

import (
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
)

func TestMCPUpdateOfAnArchivedDocument(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/archive", nil), 200, "")
	cs := ta.mcpSession("archived")
	for i, plan := range []string{"# Launch\n\nNew text.\n", "   \n"} {
		out := callTool(t, cs, "update_document", map[string]any{"id": ch.ID, "revision": 0, "plan": plan, "idempotencyKey": "k" + string(rune('0'+i))})
		wantRefusal(t, out, "document-archived")
		if want := `"Launch" is archived, so it cannot change. Restore it with restore_document first.`; out.str("message") != want {
			t.Errorf("plan %q: the refusal says %q, want %q", plan, out.str("message"), want)
		}
	}
	var plan struct{ Source string }
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if strings.Contains(plan.Source, "New text.") {
		t.Errorf("the archived plan changed: %q", plan.Source)
	}
}
