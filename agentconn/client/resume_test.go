package client

import (
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestRetryDelay is the rule of "When the server is restarting": at once
// after 1012, every 250 ms inside the announced window, then the caller's
// own backoff.
func TestRetryDelay(t *testing.T) {
	inside := &Resumption{RestartUntil: time.Now().Add(time.Hour)}
	over := &Resumption{RestartUntil: time.Now().Add(-time.Second)}
	for _, tt := range []struct {
		name   string
		r      *Resumption
		closed bool
		code   int
		want   time.Duration
	}{
		{"a 1012 close", inside, true, websocket.CloseServiceRestart, 0},
		{"a 1012 close without a notice", nil, true, websocket.CloseServiceRestart, 0},
		{"a failed attempt inside the window", inside, false, 0, RestartRetryInterval},
		{"a failed attempt after the window", over, false, 0, 8 * time.Second},
		{"another close", nil, true, websocket.CloseAbnormalClosure, 8 * time.Second},
	} {
		if got := RetryDelay(tt.r, tt.closed, tt.code, 8*time.Second); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// Backoff doubles from 1 s and stops at 30 s.
func TestBackoff(t *testing.T) {
	for failures, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second, 6: 30 * time.Second, 40: 30 * time.Second} {
		if got := Backoff(failures); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", failures, got, want)
		}
	}
}
