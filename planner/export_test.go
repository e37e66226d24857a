package planner

import "time"

// SetBackoff shortens the waits between attach attempts for a test.
func SetBackoff(p *Planner, f func(failures int) time.Duration) { p.backoff = f }
