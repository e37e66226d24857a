package room

// Await waits again on a question call whose cards are still open, as a
// process does after a restart for the Decisions an agent client still
// waits on: settle receives the call's outcome, once. It reports false when
// the call is no longer open or already has a waiter.
func (r *Room) Await(request string, settle Settle) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.cards.calls[request]; !ok {
		return false
	}
	if _, ok := r.cards.waiters[request]; ok {
		return false
	}
	r.cards.waiters[request] = settle
	return true
}
