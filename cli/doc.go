// Package cli is every chopin command: the table of commands with their
// flags and help, and what each does. Commands act on Chopin through the
// running instance's documented HTTP API with the local agent token (one
// small client, client.go), never through the server's internals; the
// server itself reaches them only as the Local interface that main fills
// with the app's, for chopin serve and for the commands that start Chopin
// for the moment when none runs. It must not import app, store or room.
package cli
