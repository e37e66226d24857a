package plannerhost_test

import (
	"strings"
	"testing"
)

// TestAgentToolErrorsMasked: an own tool's failed result with the
// structured error envelope shows as Failed with its kind and message;
// credentials are masked in everything Chat stores and shows of the tool
// rows, but not in what crosses the connection; an envelope whose code
// masking would change is shown as an ordinary, masked result.
func TestAgentToolErrorsMasked(t *testing.T) {
	token := "ghp_" + strings.Repeat("A1b2", 9)
	ta, ch, turn, _ := startTurn(t, "# Plan\n\nClone https://alice:hunter2@host/repo.git\n")

	// A host tool's output reaches the client as the tool returned it.
	out := turn.call(t, "read_plan", map[string]any{})
	if !strings.Contains(string(out), "https://alice:hunter2@host") {
		t.Errorf("read_plan output was changed: %s", out)
	}

	if err := turn.DeclareTools("clone", "deploy"); err != nil {
		t.Fatal(err)
	}
	turn.ownTool(t, "c1", "clone", `{"url":"https://alice:hunter2@host/repo.git","token":"`+token+`"}`,
		map[string]any{"error": map[string]any{"code": "no-repository-credential", "kind": "NoRepositoryCredential",
			"message": "Cloning https://alice:hunter2@host/repo.git failed with " + token + "."}}, true)
	// A code that masking would change: not recognised.
	turn.ownTool(t, "c2", "deploy", `{}`,
		map[string]any{"error": map[string]any{"code": token, "message": "denied"}}, true)
	// A successful result that contains error is shown as it is.
	turn.ownTool(t, "c3", "deploy", `{}`,
		map[string]any{"error": map[string]any{"code": "x", "message": "fine"}}, false)
	turn.done <- nil

	m := ta.finishedReply(ch.ID)
	raw := string(ta.Do("GET", "/api/channels/"+ch.ID+"/messages", nil).Body)
	for _, secret := range []string{"hunter2", token, "alice"} {
		if strings.Contains(raw, secret) {
			t.Errorf("GET /messages shows %q: %s", secret, raw)
		}
	}
	d := detailsOf(t, m)
	if len(d.Tools) != 4 {
		t.Fatalf("tools %+v", d.Tools)
	}
	if row := d.Tools[0]; row.Name != "read_plan" || !strings.Contains(string(row.Result), "[redacted]@host") {
		t.Errorf("read_plan row %s", row.Result)
	}
	row := d.Tools[1]
	if row.Status != "failed" || row.Error == nil || row.Error.Code != "no-repository-credential" || row.Error.Kind != "NoRepositoryCredential" ||
		row.Error.Message != "Cloning https://[redacted]@host/repo.git failed with [redacted]." {
		t.Errorf("clone row %+v error %+v", row, row.Error)
	}
	if !strings.Contains(string(row.Input), "https://[redacted]@host") {
		t.Errorf("clone input %s", row.Input)
	}
	if row := d.Tools[2]; row.Status != "failed" || row.Error != nil || !strings.Contains(string(row.Result), "[redacted]") {
		t.Errorf("deploy row %+v error %+v", row, row.Error)
	}
	if row := d.Tools[3]; row.Status != "done" || row.Error != nil || string(row.Result) != `{"error":{"code":"x","message":"fine"}}` {
		t.Errorf("successful row %+v", row)
	}
}
