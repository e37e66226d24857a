package store

import (
	"context"
	"strconv"
)

// The write-ahead log is checkpointed (its pages copied into the database
// file, which is then fsync'd) by the store's own goroutine, beside the
// commits rather than by them. SQLite's default is the latter: the commit
// that takes the log past 1,000 pages copies them before it returns, and
// with a plan edit writing a couple of pages, about one edit in four
// hundred waited that long for its acknowledgement.
//
// Every walCheckpointEvery write transactions, checkpointWAL runs a
// PASSIVE checkpoint from a read connection, which waits for no reader or
// writer: commits go on appending to the log meanwhile, and the first one
// after a checkpoint that caught up starts the log again from its
// beginning. Edits come with pauses between them (a person types, a
// Planner thinks), so the log stays a few hundred pages long.
//
// A writer that never pauses (a script editing in a loop) leaves no moment
// for a checkpoint to catch up, and the log would grow without end: past
// walAutoCheckpointPages, the committing connection checkpoints itself, as
// SQLite does by default at 1,000. By then the checkpoints beside it have
// copied nearly everything, so that commit has little left to copy.
//
// Durability does not change: a commit is on disk once its log frames are
// fsync'd, before and after; a crash in the middle of a checkpoint is what
// SQLite recovers from on the next open.

// walCheckpointEvery is how many write transactions pass between
// checkpoints.
const walCheckpointEvery = 100

// walAutoCheckpointPages bounds the log (pages of 4 KiB, so 16 MiB) when
// writes never pause.
const walAutoCheckpointPages = 4000

// walPragmas set the write connection's own checkpoints to the bound.
var walPragmas = "_pragma=wal_autocheckpoint(" + strconv.Itoa(walAutoCheckpointPages) + ")"

// wrote counts a write transaction and asks for a checkpoint every
// walCheckpointEvery of them.
func (s *Store) wrote() {
	if s.writes.Add(1)%walCheckpointEvery != 0 {
		return
	}
	select {
	case s.walGrew <- struct{}{}:
	default: // already asked
	}
}

// checkpointWAL checkpoints the log whenever wrote asks, until the store
// closes (closing the last connection checkpoints what is left).
func (s *Store) checkpointWAL() {
	defer close(s.walDone)
	for {
		select {
		case <-s.closing:
			return
		case <-s.walGrew:
		}
		// A failure leaves the log longer, never wrong: the next request
		// tries again.
		from := s.writes.Load()
		if _, err := s.read.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`); err == nil {
			s.walCheckpointed.Store(from)
		}
	}
}
