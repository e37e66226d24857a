package agentconn_test

import "testing"

// TestRunsDeltaWithoutFeature: a link that did not ask for run-stage-deltas
// sending a delta card is refused as malformed-message and closed with 1008.
func TestRunsDeltaWithoutFeature(t *testing.T) {
	q := newQuestionLink(t)
	writeJSON(t, q.c, `{"type":"runs","session":"`+q.session+`","active":["r1"],"paused":[],"cards":[`+
		`{"id":"r1","name":"Build","status":"running","started":1,"updated":2,"stagesDelta":true,"stages":[],"waiting":0}]}`)
	expectClose(t, q.c, `{"type":"error","code":"malformed-message","message":"A delta run card (stagesDelta) needs the run-stage-deltas feature, which this connection did not ask for."}`, 1008, "malformed-message")
}
