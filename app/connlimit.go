package app

import (
	"net"
	"time"

	"golang.org/x/net/netutil"
)

// What one local process can hold of the HTTP server: every connection has
// a deadline for its headers, its body and its idle keep-alive, and the
// server holds at most connectionCap connections at once, below the file
// limit (raised to its hard limit at start), so slow or idle clients never
// leave Chopin without a file to answer /healthz, open its database or
// accept a browser. Past the cap a new connection waits in the kernel's
// queue until one ends. A WebSocket is exempt from the deadlines once
// upgraded (the socket's own pings and queues govern it).

// serverTimeouts are the HTTP server's deadlines; tests shorten them.
var serverTimeouts = struct{ readHeader, read, idle time.Duration }{
	readHeader: 10 * time.Second,
	read:       time.Minute,
	idle:       2 * time.Minute,
}

// filesReserved are the files kept back from connections for the database,
// its log, the lock, the config and the like.
const filesReserved = 128

// connectionCap is how many connections the server holds at once for a
// file limit of files: what is left after filesReserved, and at least 64.
func connectionCap(files int) int {
	return max(64, files-filesReserved)
}

// capListener limits l to connectionCap of the file limit, raising the soft
// limit to the hard one first. It returns the cap.
func capListener(l net.Listener) (net.Listener, int) {
	n := connectionCap(raiseFileLimit())
	if testConnectionCap > 0 {
		n = testConnectionCap
	}
	return netutil.LimitListener(l, n), n
}

// testConnectionCap replaces the cap in tests; 0 keeps it.
var testConnectionCap int
