//go:build !unix

package app

// Without getrusage the benchmarks report no CPU time.

import "time"

func processCPU() time.Duration { return 0 }
