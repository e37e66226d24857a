package plannerhost

// What the bridge's end-to-end tests (package plannerhost_test) read of its
// insides: the Chat lines of Stop and Resume, and the answers still to reach
// a Planner.

const (
	MsgStopHeld        = msgStopHeld
	MsgStopUnconfirmed = msgStopUnconfirmed
	MsgStopWithdrew    = msgStopWithdrew
	MsgResumeNotHeld   = msgResumeNotHeld
)

// PendingAnswers is how many answers nobody waits on are still to reach the
// document's Planner.
func PendingAnswers(h *Host, documentID string) int {
	h.answers.mu.Lock()
	defer h.answers.mu.Unlock()
	return len(h.answers.m[documentID])
}
