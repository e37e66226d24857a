package app

import (
	"log/slog"
	"time"

	"github.com/chopin-desktop/chopin/store"
)

// The start-up's steps, timed: New and Run mark each as it ends, and Run
// logs them in one line (msg=start-up) just before the server answers its
// first request, with whether the database was checked whole and why. The
// line is how a start is measured step by step (cmd/chopin-bench reads it)
// and how a slow start explains itself.

// packageStarted is when this package was initialised: near the process's
// start, before the command line and the settings were read.
var packageStarted = time.Now()

// startTrace is one start's steps.
type startTrace struct {
	began time.Time // New was called
	last  time.Time
	steps []store.Step
	store store.Opening
}

func newStartTrace() *startTrace {
	now := time.Now()
	return &startTrace{began: now, last: now}
}

// step ends the step called name.
func (t *startTrace) step(name string) {
	now := time.Now()
	t.steps = append(t.steps, store.Step{Name: name, Took: now.Sub(t.last)})
	t.last = now
}

// log writes the start-up line: the whole start from New, whether the
// whole database was checked, then every step (the store's as store.*),
// and before_new, from the package's initialisation to New (reading the
// command line and the settings; meaningless in a test's process).
func (t *startTrace) log(logger *slog.Logger) {
	attrs := []any{
		slog.Duration("took", time.Since(t.began)),
		slog.Bool("whole_check", t.store.FullCheck),
	}
	if t.store.FullCheck {
		attrs = append(attrs, slog.String("why", t.store.Why))
	}
	attrs = append(attrs, slog.Duration("before_new", t.began.Sub(packageStarted)))
	for _, s := range t.steps {
		if s.Name == "store" {
			for _, ss := range t.store.Steps {
				attrs = append(attrs, slog.Duration("store."+ss.Name, ss.Took))
			}
			continue
		}
		attrs = append(attrs, slog.Duration(s.Name, s.Took))
	}
	logger.Info("start-up", attrs...)
}
