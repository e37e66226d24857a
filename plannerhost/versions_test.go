package plannerhost_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/plannerhost"
	"github.com/chopin-desktop/chopin/room"
)

// TestHistoryTools: every turn offers list_versions and read_version;
// list_versions lists the versions GET …/versions lists, in pages;
// read_version reads the plan as it was at one, paged like read_plan, its
// next line naming the version, masked, after a line saying which version it
// is and where the plan is now; versions not kept and bad arguments are
// refused in words; edit_plan still edits the plan as it is now.
func TestHistoryTools(t *testing.T) {
	ta, ch, turn, _ := startTurn(t, "# Plan\n\nShip on Monday.\n\ntoken ghp_16C7e42F292c6912E7710c838347Ae178B4a in use\n")
	defer close(turn.done)
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 1, "source": "# Plan\n\nShip on Tuesday.\n"}), 200, "")
	apptest.Want(t, ta.Do("PUT", "/api/channels/"+ch.ID+"/plan", map[string]any{"revision": 2, "source": "# Plan\n\nShip on Wednesday.\n"}), 200, "")

	offered := map[string]json.RawMessage{}
	for _, tool := range turn.Message.Tools {
		offered[tool.Name] = tool.InputSchema
	}
	for _, name := range []string{plannerhost.ToolListVersions, plannerhost.ToolReadVersion} {
		if s, ok := offered[name]; !ok || !json.Valid(s) {
			t.Fatalf("the turn does not offer %s with a schema: %v", name, turn.Message.Tools)
		}
	}

	// list_versions: the HTTP route's versions, paged.
	var want struct{ Versions []room.Version }
	ta.Do("GET", "/api/channels/"+ch.ID+"/versions", nil).JSON(t, &want)
	var page struct {
		Versions []room.Version
		Next     *int64
	}
	json.Unmarshal(turn.call(t, plannerhost.ToolListVersions, map[string]any{}), &page)
	if fmt.Sprint(page.Versions) != fmt.Sprint(want.Versions) || len(page.Versions) != 4 || page.Next != nil {
		t.Fatalf("list_versions %+v, want %+v", page, want.Versions)
	}
	json.Unmarshal(turn.call(t, plannerhost.ToolListVersions, map[string]any{"limit": 2}), &page)
	if len(page.Versions) != 2 || page.Versions[0].Version != 3 || page.Next == nil || *page.Next != 2 {
		t.Fatalf("list_versions limit 2: %+v", page)
	}
	page.Next = nil
	json.Unmarshal(turn.call(t, plannerhost.ToolListVersions, map[string]any{"limit": 2, "before": 2}), &page)
	if len(page.Versions) != 2 || page.Versions[0].Version != 1 || page.Versions[1].Version != 0 || page.Next != nil {
		t.Fatalf("list_versions before 2: %+v", page)
	}

	// read_version: version 1, masked, then a page of it.
	var text string
	json.Unmarshal(turn.call(t, plannerhost.ToolReadVersion, map[string]any{"version": 1}), &text)
	if !strings.HasPrefix(text, "version: 1, made ") || !strings.Contains(text, " by Chopin (an edit over HTTP, a decision line, or the plan's first text), as the plan was then; it is now at revision 3") ||
		!strings.Contains(text, "\nrevision: 1\n") || !strings.Contains(text, "Ship on Monday.") || !strings.Contains(text, "token [redacted] in use") || strings.Contains(text, "ghp_") {
		t.Errorf("read_version 1:\n%s", text)
	}
	json.Unmarshal(turn.call(t, plannerhost.ToolReadVersion, map[string]any{"version": 1, "limit": 2}), &text)
	if !strings.Contains(text, `next: read_version {"version":1,"offset":3,"limit":2}`) || strings.Contains(text, "Ship on Monday.") {
		t.Errorf("read_version 1, two lines:\n%s", text)
	}
	json.Unmarshal(turn.call(t, plannerhost.ToolReadVersion, map[string]any{"version": 1, "offset": 3}), &text)
	if !strings.Contains(text, "Ship on Monday.") || strings.Contains(text, "# Plan") {
		t.Errorf("read_version 1 from line 3:\n%s", text)
	}

	for _, c := range []struct{ input, want string }{
		{`{"version":99}`, "The history does not keep version 99 of this plan. The newest kept version is 3. List them with list_versions."},
		{`{}`, "read_version takes {version, offset?, limit?, column?}: version is a whole number of 0 or more"},
		{`{"version":-1}`, "read_version takes {version, offset?, limit?, column?}: version is a whole number of 0 or more"},
		{`{"version":"1"}`, "read_version takes {version, offset?, limit?, column?}: json: cannot unmarshal"},
		{`{"version":1,"id":"x"}`, `read_version takes {version, offset?, limit?, column?}: json: unknown field "id"`},
	} {
		if msg := turn.callError(t, plannerhost.ToolReadVersion, c.input); !strings.Contains(msg, c.want) {
			t.Errorf("read_version %s: %q, want %q", c.input, msg, c.want)
		}
	}
	for _, c := range []struct{ input, want string }{
		{`{"limit":0}`, "list_versions: limit must be a whole number from 1 to 200."},
		{`{"before":0}`, "list_versions: before must be a version of 1 or more"},
		{`{"page":2}`, `list_versions takes {before?, limit?}: json: unknown field "page"`},
	} {
		if msg := turn.callError(t, plannerhost.ToolListVersions, c.input); !strings.Contains(msg, c.want) {
			t.Errorf("list_versions %s: %q, want %q", c.input, msg, c.want)
		}
	}

	// edit_plan edits the plan as it is now, whatever version was read.
	turn.call(t, room.ToolEditPlan, map[string]any{"revision": 3, "operations": []any{map[string]any{"op": "insert_root", "content": "Notes."}}})
	var plan struct{ Source string }
	ta.Do("GET", "/api/channels/"+ch.ID+"/plan", nil).JSON(t, &plan)
	if !strings.Contains(plan.Source, "Ship on Wednesday.") || !strings.Contains(plan.Source, "Notes.") {
		t.Errorf("the plan after edit_plan: %q", plan.Source)
	}
}
