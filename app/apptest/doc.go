// Package apptest runs a real Chopin for end-to-end tests and talks to it
// as its clients do: a browser signed in through a launch link, HTTP with
// the app's own Origin, the room WebSocket, and a chopin subcommand run
// in-process. The tests of app and of plannerhost share it.
//
// It must not import app (app's own tests use it, which would be an import
// cycle) nor any other server package: a test builds the app on port 0 and
// a temporary directory (see Env) and hands it over as a Server.
package apptest
