// Package instance is how the processes of Chopin on one computer find the
// running one and prove they are its person's: the single-instance lock and
// record in the data directory, and the local agent token in the config
// directory. The server takes the lock and reads the token; the commands
// find the record and present the token. It imports nothing of Chopin's.
package instance
