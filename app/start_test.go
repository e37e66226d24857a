package app

import (
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/config"
)

// What app's end-to-end tests need beyond package apptest: the App built
// with New on the test configuration, kept for tests that look inside.

// testApp is the running app (apptest) and the App itself.
type testApp struct {
	*apptest.App
	app *App
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

// startWithLaunch starts an app with the repository octo/plans, its
// document "Launch" and a tab on it: where the Planner's tests begin.
func startWithLaunch(t testing.TB) (*testApp, apptest.Document, *apptest.Room) {
	t.Helper()
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch")
	return ta, ch, ta.DialRoom(ch.ID)
}

func startAppWith(t testing.TB, cfg config.Config) *testApp {
	t.Helper()
	a, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return &testApp{App: apptest.Serve(t, a), app: a}
}
