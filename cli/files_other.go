//go:build !unix

package cli

// Outside Unix no path a person names opens a pipe that waits for a
// writer, and folders cannot be flushed: a rename is durable once done.

const openNoWait = 0

func syncDir(string) {}
