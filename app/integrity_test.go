package app

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/config"
	"github.com/chopin-desktop/chopin/store"
	"github.com/chopin-desktop/chopin/store/storetest"
)

// The database's check in the background: a page damaged while Chopin
// runs is found, every write is refused from then on with what to do, and
// every open tab is told, as is every tab that opens after.

// startAppChecking starts an app on cfg whose background check runs every
// so often, and not before first has passed.
func startAppChecking(t *testing.T, cfg config.Config, first, every time.Duration) *testApp {
	t.Helper()
	a, err := New(cfg, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	a.integrity.first, a.integrity.every = first, every
	return &testApp{App: apptest.Serve(t, a), app: a}
}

func TestBackgroundCheckFindsDamageAndEveryTabIsTold(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	first := startAppWith(t, cfg)
	first.AddRepository("octo/plans")
	var docs []apptest.Document
	for _, title := range []string{"Launch", "Rollout", "Budget"} {
		docs = append(docs, first.CreateDocument("octo/plans", title))
	}
	// Opened once, their plans are stored (Budget's never is).
	first.DialRoom(docs[0].ID)
	first.DialRoom(docs[1].ID)
	first.Stop() // a clean stop: the next start does not read the whole file

	ta := startAppChecking(t, cfg, time.Hour, 24*time.Hour)
	if o := ta.app.store.Opening(); o.FullCheck {
		t.Fatalf("the start after a clean stop checked the whole file: %s", o.Why)
	}
	var st storageState
	r := ta.Do("GET", "/api/storage", nil)
	apptest.Want(t, r, 200, "")
	r.JSON(t, &st)
	if st.State != "sound" || st.LastChecked == nil {
		t.Fatalf("before the damage, GET /api/storage: %s", r.Body)
	}
	tab := ta.DialRoom(docs[0].ID)

	// A page of a table nothing in this test reads: the rest of the file
	// stays readable.
	dbPath := filepath.Join(cfg.DataDir, "chopin.db")
	storetest.Scribble(t, dbPath, "images")
	ta.app.checkIntegrity(context.Background())
	d := ta.app.store.Damage()
	if d == nil {
		t.Fatal("the check found no damage")
	}
	wantStart := "Chopin found damage in its database (chopin.db in " + cfg.DataDir + ") and saves no more changes"
	if !strings.HasPrefix(d.Message, wantStart) || !strings.Contains(d.Message, "put the backup in place of chopin.db") {
		t.Fatalf("the damage is told as:\n%s", d.Message)
	}

	// The open tab is told.
	told := tab.Until("storage:damaged")
	if told["message"] != d.Message {
		t.Errorf("the tab was told %q, want %q", told["message"], d.Message)
	}
	// Its writes are refused with the same words.
	tab.Send(map[string]any{"type": "chat:send", "id": "m1", "text": "Still there?"})
	refused := tab.Until("error")
	if refused["id"] != "m1" || refused["code"] != "storage-damaged" || refused["message"] != "This was not saved. "+d.Message {
		t.Errorf("a message sent after the damage: %v", refused)
	}
	// So are the HTTP API's.
	r = ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "After"})
	apptest.Want(t, r, 503, "storage-damaged")
	var e struct{ Message string }
	r.JSON(t, &e)
	if e.Message != "This was not saved. "+d.Message {
		t.Errorf("an HTTP write after the damage: %s", r.Body)
	}
	apptest.Want(t, ta.Do("PATCH", "/api/channels/"+docs[1].ID, map[string]string{"title": "Renamed"}), 503, "storage-damaged")
	// What is saved can still be read.
	apptest.Want(t, ta.Do("GET", "/api/channels/"+docs[2].ID, nil), 200, "")
	// A page without a socket asks.
	r = ta.Do("GET", "/api/storage", nil)
	r.JSON(t, &st)
	if st.State != "damaged" || st.Message != d.Message || st.Found == "" {
		t.Errorf("after the damage, GET /api/storage: %s", r.Body)
	}
	// A tab opened after is told once it has joined.
	later := ta.DialRoom(docs[1].ID)
	if m := later.Until("storage:damaged"); m["message"] != d.Message {
		t.Errorf("a tab opened after the damage was told %v", m)
	}
	// A document never opened cannot open now (its plan would be its
	// first write), and its tab is told why before it closes.
	never := ta.OpenRoom(docs[2].ID)
	if m := never.Until("storage:damaged"); m["message"] != d.Message {
		t.Errorf("a tab on a document never opened was told %v", m)
	}
	if code, _ := never.CloseCode(); code != 1011 {
		t.Errorf("a document never opened, after the damage: closed with %d", code)
	}

	// Quit: no clean stop is recorded, so the next start reads the whole
	// file and refuses it, saying what to do.
	ta.Stop()
	_, err := New(cfg, testLogger(t))
	var se *store.StartupError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "is damaged (SQLite's check found:") {
		t.Fatalf("the start after the damage: %v", err)
	}
}

// The schedule: the check runs by itself once its first wait is over, and
// a sound file stays writable.
func TestBackgroundCheckRunsOnItsOwn(t *testing.T) {
	ta := startAppChecking(t, testConfig(t, t.TempDir()), 0, 100*time.Millisecond)
	before := ta.app.store.LastChecked()
	deadline := time.Now().Add(apptest.Wait)
	for !ta.app.store.LastChecked().After(before) {
		if time.Now().After(deadline) {
			t.Fatal("the background check did not run")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ta.app.store.Damage() != nil {
		t.Fatal("a sound database was found damaged")
	}
	ta.AddRepository("octo/plans")
}
