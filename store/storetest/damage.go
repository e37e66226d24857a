package storetest

import (
	"database/sql"
	"os"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the driver the file is opened with, as Chopin's own
)

// Scribble writes over the first bytes of the page that holds the root of
// table's B-tree in the database file at path, as a failing disk would.
// Chopin may have the file open: the damage is under it, as a disk's is.
func Scribble(t testing.TB, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var root, pageSize int64
	err = db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = ?`, table).Scan(&root)
	if err == nil {
		err = db.QueryRow(`PRAGMA page_size`).Scan(&pageSize)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff\x00scribble", 200)), (root-1)*pageSize); err != nil {
		t.Fatal(err)
	}
}
