package plannerhost_test

import (
	"context"
	"io"
	"testing"

	"github.com/chopin-desktop/chopin/app"
	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/config"
)

// What the bridge's end-to-end tests need beyond package apptest: the
// real app built with app.New on the test configuration, and chopin
// planner run in-process.

// testApp is the running app (apptest) and the App itself.
type testApp struct {
	*apptest.App
	app *app.App
}

// testConfig is the configuration of a test instance in dir, signed in
// as Ada.
func testConfig(t testing.TB, dir string) config.Config {
	t.Helper()
	env := apptest.Env(dir)
	cfg, err := config.Load(config.Flags{}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Login, cfg.DisplayName = "ada", "Ada"
	return cfg
}

func startApp(t testing.TB) *testApp {
	t.Helper()
	return startAppWith(t, testConfig(t, t.TempDir()))
}

func startAppWith(t testing.TB, cfg config.Config) *testApp {
	t.Helper()
	a, err := app.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &testApp{App: apptest.Serve(t, a), app: a}
}

// plannerAPIKey is the model server's key chopin planner is given.
const plannerAPIKey = "sk-planner-test-key"

// runPlanner runs chopin planner in-process against the data and config
// directories in env, as a person on the same computer would.
func runPlanner(t *testing.T, env map[string]string, args ...string) *apptest.Command {
	t.Helper()
	return apptest.StartCommand(t, "chopin planner", func(ctx context.Context, stdout, stderr io.Writer) int {
		c := &cli.CLI{Local: app.Local{}, Stdout: stdout, Stderr: stderr, Getenv: func(k string) string { return env[k] }}
		return c.Run(ctx, append([]string{"planner"}, args...))
	})
}
