// Command startfloor is what every start of a program built like Chopin
// costs before any of Chopin's own work: the harness's hello-world server,
// with every package chopin links initialised (chopin-bench's start rows
// compare chopin with both) and the database at $DB opened as Chopin's
// store opens it, its schema read, before /healthz is answered on $PORT.
package main

import (
	"database/sql"
	"net/http"
	"net/url"
	"os"

	_ "github.com/chopin-desktop/chopin/app" // every package chopin links, initialised
	_ "github.com/chopin-desktop/chopin/cli"
	_ "modernc.org/sqlite"
)

func main() {
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: os.Getenv("DB")}).EscapedPath()+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)")
	if err != nil {
		os.Exit(1)
	}
	// The first statement on a connection reads and parses the schema.
	var tables int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		os.Stderr.WriteString("startfloor: " + err.Error() + "\n")
		os.Exit(1)
	}
	http.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{\"status\": \"ok\"}\n"))
	})
	if err := http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil); err != nil {
		os.Exit(1)
	}
}
