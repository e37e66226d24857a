//go:build !unix

package app

import "errors"

var errNoSuchNode = errors.New("no named pipes or device nodes on this system")

func makeFIFO(string) error   { return errNoSuchNode }
func makeDevice(string) error { return errNoSuchNode }
