package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// The bare relay, the floor Chopin's sockets are compared with:
// apptest.RelayHandler, the relay the go test benchmarks use, served from a
// process of its own (`chopin-bench relay`) so that its CPU time and memory
// are its own. /ack writes each message as one row in its own fsync'd
// transaction and then answers; /fanout forwards each message to the other
// /fanout sockets (an agent's socket to the browsers'); /idle holds a
// socket, reading, as a server holding an idle browser does; /edits
// (fanout.go) inserts each edit, answers its sender and forwards it to the
// other /edits sockets.

func runRelay(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("relay", flag.ContinueOnError)
	dbPath := fs.String("db", "", "the SQLite file to insert into")
	port := fs.Int("port", 0, "the loopback port to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	h, closeDB, err := apptest.RelayHandler(*dbPath)
	if err != nil {
		return err
	}
	defer closeDB()
	edits, err := newEditRelay(*dbPath + "-edits")
	if err != nil {
		return err
	}
	defer edits.db.Close()
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.Handle("/edits", edits)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "relay at http://%s\n", l.Addr())
	return http.Serve(l, mux)
}
