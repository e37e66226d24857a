package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/fault"
)

// A full disk at run time: the write that does not fit is refused as
// storage-full with a plain message, nothing of it is kept, what was
// saved before stays, and writes work again once there is room. SQLite's
// own page limit stands in for the disk: it fails the same way
// (SQLITE_FULL) at the same place.
func TestFullDiskRefusesWithoutHalfWriting(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	repo := mustRepo(t, s, "octo/plans")
	var pages int
	if err := s.write.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.write.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+2)); err != nil {
		t.Fatal(err)
	}
	saved := 0
	var err error
	for ; saved < 1000; saved++ {
		if _, err = s.CreateChannel(ctx, repo.NodeID, fmt.Sprintf("Plan %d %s", saved, strings.Repeat("words ", 18))); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("the page limit never filled")
	}
	sf := StorageFault(err)
	var fe *fault.Error
	if !errors.As(sf, &fe) || fe.Kind != fault.StorageFull || fe.Code != "storage-full" ||
		!strings.HasPrefix(fe.Message, "The disk Chopin keeps its data on is full, so this was not saved.") {
		t.Fatalf("a full disk is %v (from %v)", sf, err)
	}
	count := 0
	for cursor := ""; ; {
		page, err := s.ListChannels(ctx, repo.NodeID, ListOptions{Limit: 100, Cursor: cursor, IncludeArchived: true})
		if err != nil {
			t.Fatal(err)
		}
		count += len(page.Channels)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if count != saved {
		t.Fatalf("after the refusal: %d documents, %d were saved", count, saved)
	}
	if _, err := s.write.ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateChannel(ctx, repo.NodeID, "After"); err != nil {
		t.Fatalf("with room again: %v", err)
	}
	if StorageFault(errors.New("another failure")) != nil || StorageFault(nil) != nil {
		t.Error("only SQLite's storage failures are storage faults")
	}
}
