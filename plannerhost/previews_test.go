package plannerhost_test

import (
	"encoding/base64"
	"encoding/json"
	"image/color"
	"slices"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/agentconn/client"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/room"
)

func toolNames(tt *testTurn) []string {
	var names []string
	for _, tool := range tt.Message.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// previewQuestion is an input-request questionnaire whose first option has
// a preview.
func previewQuestion() wire.Input {
	return wire.Input{Method: wire.MethodQuestionnaire, Params: &wire.QuestionnaireParams{Questions: []wire.QuestionItem{{
		Question: "Which layout?", Header: "Layout",
		Options: []wire.Option{{Label: "Grid", Description: "Tiles", Preview: "```mermaid\ngraph TD; A-->B\n```"},
			{Label: "List", Description: "Rows"}},
	}}}}
}

// askPreview asks previewQuestion, answers Grid over HTTP and returns the
// card's options as the room showed them and the client's result.
func askPreview(t *testing.T, ta *testApp, ch apptest.Document, turn *testTurn, browser *apptest.Room) ([]room.Option, client.Result) {
	t.Helper()
	res := make(chan client.Result, 1)
	go func() {
		r, _ := turn.Session.Ask(turn.ctx, previewQuestion(), client.AskOptions{})
		res <- r
	}()
	var card map[string]any
	for card == nil || card["status"] != "open" {
		card = browser.Until("decision:update")["decision"].(map[string]any)
	}
	raw, _ := json.Marshal(card["call"])
	call, err := room.ParseQuestionCall(raw)
	if err != nil && !strings.Contains(err.Error(), "description") {
		t.Fatalf("card call %s: %v", raw, err)
	}
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/decisions/"+card["id"].(string)+"/answer", map[string]any{"labels": []string{"Grid"}}), 200, "")
	return call.Questions[0].Options, <-res
}

// TestAgentOptionPreviews: with decision-option-previews an option's
// preview is its own field and a turn offers upload_plan_image, which
// stores the image, answers with its Markdown and shows it on the turn's
// message.
func TestAgentOptionPreviews(t *testing.T) {
	ta, ch, turn, browser, l := startTurnWith(t, "", "decision-option-previews")
	if !l.Has("decision-option-previews") {
		t.Fatalf("attached %+v", l.Attached())
	}
	if names := toolNames(turn); !slices.Contains(names, room.ToolUploadPlanImage) {
		t.Fatalf("tools %v", names)
	}
	options, res := askPreview(t, ta, ch, turn, browser)
	if options[0].Preview == nil || *options[0].Preview != "```mermaid\ngraph TD; A-->B\n```" || options[0].Description != "Tiles" {
		t.Errorf("options %+v", options)
	}
	if res.Status != "answered" || len(res.Answers) != 1 || res.Answers[0].Preview != "```mermaid\ngraph TD; A-->B\n```" {
		t.Errorf("result %+v", res)
	}

	data := base64.StdEncoding.EncodeToString(testPNG(t, 5, 5, color.RGBA{0, 128, 0, 255}))
	out := turn.call(t, room.ToolUploadPlanImage, map[string]any{"data": data, "mimeType": "image/png", "alt": "A green square"})
	var up room.UploadImageResult
	if err := json.Unmarshal(out, &up); err != nil || !strings.HasPrefix(up.Path, "/images/") || up.Markdown != "![A green square]("+up.Path+")" {
		t.Fatalf("upload %s", out)
	}
	again := turn.call(t, room.ToolUploadPlanImage, map[string]any{"data": data, "mimeType": "image/png", "alt": "Again"})
	if !strings.Contains(string(again), up.Path) {
		t.Errorf("same bytes, another path: %s", again)
	}
	if res := ta.Do("GET", up.Path, nil); res.Status != 200 || res.Header.Get("Content-Type") != "image/png" {
		t.Errorf("GET %s: %d", up.Path, res.Status)
	}
	for _, bad := range []struct{ input, says string }{
		{`{"data":"` + data + `","mimeType":"image/svg+xml","alt":"x"}`, "mimeType must be"},
		{`{"data":"` + data + `","mimeType":"image/jpeg","alt":"x"}`, "does not match"},
		{`{"data":"` + data + `","mimeType":"image/png","alt":""}`, "alt is required"},
		{`{"data":"` + data + `","mimeType":"image/png"}`, "alt is required"},
	} {
		if msg := turn.callError(t, room.ToolUploadPlanImage, bad.input); !strings.Contains(msg, bad.says) {
			t.Errorf("%s: %q", bad.input, msg)
		}
	}
	turn.done <- nil
	d := detailsOf(t, ta.finishedReply(ch.ID))
	if len(d.Images) != 2 || d.Images[0].Path != up.Path || *d.Images[0].Alt != "A green square" || *d.Images[1].Alt != "Again" {
		t.Errorf("images %+v", d.Images)
	}
}

// TestAgentOptionPreviewsWithout: a link without the feature gets the
// preview joined onto the option's description, the answers it got before,
// and no image tool.
func TestAgentOptionPreviewsWithout(t *testing.T) {
	ta, ch, turn, browser, _ := startTurnWith(t, "", "run-stage-deltas")
	if names := toolNames(turn); slices.Contains(names, room.ToolUploadPlanImage) {
		t.Fatalf("tools %v", names)
	}
	if msg := turn.callError(t, room.ToolUploadPlanImage, `{"data":"","mimeType":"image/png","alt":"x"}`); msg == "" {
		t.Error("upload_plan_image ran without the feature")
	}
	options, res := askPreview(t, ta, ch, turn, browser)
	if options[0].Preview != nil || options[0].Description != "Tiles\n\n```mermaid\ngraph TD; A-->B\n```" || options[1].Description != "Rows" {
		t.Errorf("options %+v", options)
	}
	if res.Status != "answered" || len(res.Answers) != 1 || res.Answers[0].Kind != "option" || res.Answers[0].Preview != "```mermaid\ngraph TD; A-->B\n```" {
		t.Errorf("result %+v", res)
	}
	turn.done <- nil
}
