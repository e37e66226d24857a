package app

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/modelserver"
	"github.com/chopin-desktop/chopin/store"
)

// chopin planner with no model server named finds one of the usual local
// ones, says which it tried when none answers, and with several models
// takes the one chosen in Chopin's composer, else the first, saying so.

// runPlannerLooking is runPlanner with the model servers chopin planner
// looks for when none is named.
func runPlannerLooking(t *testing.T, servers []modelserver.Server, env map[string]string, args ...string) *plannerCLI {
	t.Helper()
	c := apptest.StartCommand(t, "chopin planner", func(ctx context.Context, stdout, stderr io.Writer) int {
		c := &cli.CLI{Local: Local{}, Stdout: stdout, Stderr: stderr, Getenv: func(k string) string { return env[k] },
			ACP: testACP, ModelServers: servers}
		return c.Run(ctx, append([]string{"planner"}, args...))
	})
	return &plannerCLI{Command: c, stdout: c.Stdout, stderr: c.Stderr}
}

// pollAttached waits until the document's Planner is attached.
func (ta *testApp) pollAttached(t *testing.T, docID string) {
	t.Helper()
	deadline := time.Now().Add(apptest.Wait)
	for time.Now().Before(deadline) {
		var st struct{ State string }
		ta.Do("GET", "/api/channels/"+docID+"/planner", nil).JSON(t, &st)
		if st.State == "attached" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the Planner did not attach")
}

func TestPlannerFindsModelServer(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	chosen := ta.CreateDocument("octo/plans", "Chosen")
	model := newFakeModelServer(t) // qwen2.5 and llama3.2
	env := ta.plannerEnv(nil)
	closedA, closedB := closedLoopbackURL(t), closedLoopbackURL(t)
	none := []modelserver.Server{{ID: "ollama", Name: "Ollama", BaseURL: closedA}, {ID: "lmstudio", Name: "LM Studio", BaseURL: closedB}}

	t.Run("none answers", func(t *testing.T) {
		c := runPlannerLooking(t, none, env, ch.ID)
		want := "chopin planner: No model server answered on this computer; tried Ollama (" + closedA + "), LM Studio (" + closedB + "). " +
			"Start one (for Ollama: ollama serve, then ollama pull qwen2.5), or name yours with --base-url.\n"
		if code := c.wait(t); code != 1 || c.stderr.String() != want {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", code, c.stderr, want)
		}
	})

	t.Run("the named one does not answer", func(t *testing.T) {
		c := runPlannerLooking(t, none, env, "--base-url", closedA, ch.ID)
		want := "chopin planner: The model server at " + closedA + " did not answer: connection refused. Is it running? Start it, or name another with --base-url.\n"
		if code := c.wait(t); code != 1 || c.stderr.String() != want {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1, stderr:\n%s", code, c.stderr, want)
		}
	})

	found := append(none, modelserver.Server{ID: "llama.cpp", Name: "llama.cpp", BaseURL: model.ts.URL + "/v1"})
	t.Run("found, the first model", func(t *testing.T) {
		c := runPlannerLooking(t, found, env, ch.ID)
		ta.pollAttached(t, ch.ID)
		if code := c.stop(t); code != 0 {
			t.Errorf("exit %d: %s", code, c.stderr)
		}
		wantErr := "chopin planner: The model server has 2 models; answering with qwen2.5, its first, where Chopin's composer chose none. Choose another there, or with --model.\n"
		if c.stderr.String() != wantErr {
			t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr, wantErr)
		}
		if want := "Answering with qwen2.5 on " + model.ts.URL + "/v1."; !strings.Contains(c.stdout.String(), want) {
			t.Errorf("stdout:\n%s\nwant %q", c.stdout, want)
		}
	})

	// The document named by owner/name/slug, as chopin export takes it.
	if err := ta.app.Store().SaveModelChoice(context.Background(), chosen.ID, store.ModelChoice{Model: "llama3.2", ModelName: "llama3.2"}); err != nil {
		t.Fatal(err)
	}
	t.Run("the composer's choice", func(t *testing.T) {
		c := runPlannerLooking(t, found, env, "octo/plans/"+chosen.Slug)
		ta.pollAttached(t, chosen.ID)
		if code := c.stop(t); code != 0 {
			t.Errorf("exit %d: %s", code, c.stderr)
		}
		wantErr := "chopin planner: The model server has 2 models; answering with llama3.2, the one chosen in Chopin's composer. Choose another there, or with --model.\n"
		if c.stderr.String() != wantErr {
			t.Errorf("stderr:\n%s\nwant:\n%s", c.stderr, wantErr)
		}
		if want := "Answering with llama3.2 on " + model.ts.URL + "/v1."; !strings.Contains(c.stdout.String(), want) {
			t.Errorf("stdout:\n%s\nwant %q", c.stdout, want)
		}
	})
}
