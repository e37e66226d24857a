package app

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chopin-desktop/chopin/store"
)

// The database's check in the background, and what every tab is told when
// it finds damage. A start after a clean stop no longer reads the whole
// file (store/stoprecord.go); instead the whole check (store.Verify) runs
// while Chopin serves: once a day, counted from the last whole check (at
// a start after a crash, or here, in this run or an earlier one), and never
// sooner than a few seconds after the start. It runs on a thread of its
// own at the lowest priority, CPU and disk, and rests between tables as
// long as the last one took, so it takes at most about half of one core
// and holds up no edit (each table is a read transaction of its own).
//
// Damage found by it, or by a write that met a damaged page, makes the
// store refuse every write with storage-damaged and what to do; every
// open tab is sent storage:damaged with the same words
// (docs/room-protocol.md), a tab that joins later gets it after its
// snapshots, and GET /api/storage answers it to the pages without a
// socket, which ask it every minute.

// integrityCheck is when the background check runs, and its goroutine.
type integrityCheck struct {
	// Set at construction; tests change them before Run.
	first time.Duration // after the start, at the earliest
	every time.Duration // between whole checks
	rest  time.Duration // the least rest between tables

	// Owned by Run and Close.
	stop context.CancelFunc
	done chan struct{}
}

func defaultIntegrityCheck() integrityCheck {
	return integrityCheck{first: 10 * time.Second, every: 24 * time.Hour, rest: 20 * time.Millisecond}
}

// startIntegrityCheck starts the schedule.
func (a *App) startIntegrityCheck() {
	ctx, cancel := context.WithCancel(context.Background())
	a.integrity.stop, a.integrity.done = cancel, make(chan struct{})
	go func() {
		defer close(a.integrity.done)
		a.integrityLoop(ctx)
	}()
}

// stopIntegrityCheck stops the schedule and a check under way, and waits
// for them: the store closes next.
func (a *App) stopIntegrityCheck() {
	if a.integrity.stop != nil {
		a.integrity.stop()
		<-a.integrity.done
	}
}

func (a *App) integrityLoop(ctx context.Context) {
	wait := max(a.integrity.first, time.Until(a.store.LastChecked().Add(a.integrity.every)))
	for a.store.Damage() == nil {
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		a.checkIntegrity(ctx)
		wait = a.integrity.every
	}
}

// checkIntegrity runs one whole check, on a goroutine of its own whose
// thread runs at the lowest priority and ends with it, and waits for it.
func (a *App) checkIntegrity(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		lowerPriority()
		began := time.Now()
		d, err := a.store.Verify(ctx, func(took time.Duration) error {
			t := time.NewTimer(max(took, a.integrity.rest))
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		})
		switch {
		case ctx.Err() != nil:
		case err != nil:
			// Nothing is known of the file: the next check tries again.
			a.log.Warn("the database's check could not finish", "err", err)
		case d == nil:
			a.log.Info("checked the database: sound", "took", time.Since(began))
		}
	}()
	<-done
}

// storageDamaged is the store telling of damage, once: logged, and told
// to every open tab.
func (a *App) storageDamaged(d store.Damage) {
	a.log.Error("the database is damaged: refusing every write", "found", d.Found)
	frame := damageFrame(&d)
	// Not on the caller's goroutine: a write may have found it, under its
	// room's lock.
	go a.sockets.each(func(c *socket) { c.Send(frame) })
}

// showDamage tells a tab that has just joined, when the database is
// damaged. (A tab that joins while the damage is told may hear it twice:
// the banner shows once.)
func (a *App) showDamage(sock *socket) {
	if d := a.store.Damage(); d != nil {
		sock.Send(damageFrame(d))
	}
}

type msgStorageDamaged struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func damageFrame(d *store.Damage) []byte {
	b, _ := json.Marshal(msgStorageDamaged{Type: "storage:damaged", Message: d.Message}) // strings always encode
	return b
}

// storageState is GET /api/storage's answer.
type storageState struct {
	State       string  `json:"state"`             // "sound" or "damaged"
	Message     string  `json:"message,omitempty"` // with damaged: what happened and what to do
	Found       string  `json:"found,omitempty"`   // with damaged: SQLite's words
	LastChecked *string `json:"lastChecked"`       // the last whole check that found the file sound; null if none
}

func (a *App) handleStorage(c echo.Context) error {
	st := storageState{State: "sound"}
	if t := a.store.LastChecked(); !t.IsZero() {
		s := rfc3339(t.UnixMilli())
		st.LastChecked = &s
	}
	if d := a.store.Damage(); d != nil {
		st.State, st.Message, st.Found = "damaged", d.Message, d.Found
	}
	return c.JSON(http.StatusOK, st)
}
