package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// revertPlan is the plan as a restore, a revert and a PUT answer it.
type revertPlan struct {
	Source   string
	Revision int64
}

// call is one request of the crash test's stream, without failing the
// test on a dropped connection: the process is killed under it.
func (h *home) call(token, origin, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, origin+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// TestCrashKeepsAcknowledgedReverts: Chopin killed with SIGKILL during a
// stream of edits, restores and reverts; after each restart every change
// it answered 200 for is in the history with the text it answered, and the
// plan is the last acknowledged text or the one change after it that was
// under way.
func TestCrashKeepsAcknowledgedReverts(t *testing.T) {
	h := newHome(t)
	srv := h.start("serve")
	h.api(srv.origin, "POST", "/api/repositories", map[string]string{"name": "octo/plans"}, nil)
	var ch channel
	h.api(srv.origin, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "Undo crash"}, &ch)
	raw, err := os.ReadFile(filepath.Join(h.configDir, "agent-token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(raw))
	rng := rand.New(rand.NewPCG(19, 3))

	var last revertPlan
	h.api(srv.origin, "GET", "/api/channels/"+ch.ID+"/plan", nil, &last)
	acked := map[int64]string{last.Revision: last.Source}
	line := 0
	reverts, restores := 0, 0
	for round := range 4 {
		// The stream runs until the process dies under it.
		type result struct {
			plan revertPlan
			err  error
		}
		results := make(chan result, 1)
		stop := make(chan struct{})
		killAt := 20 + rng.IntN(40)                            // acknowledgements
		pause := time.Duration(rng.IntN(3)) * time.Millisecond // then the next request is under way, or about to be
		go func(cur revertPlan) {
			defer close(results)
			for {
				select {
				case <-stop:
					return
				default:
				}
				var code int
				var body []byte
				var err error
				switch k := rng.IntN(4); {
				case k == 0 || cur.Revision < 3:
					line++
					code, body, err = h.call(token, srv.origin, "PUT", "/api/channels/"+ch.ID+"/plan",
						map[string]any{"revision": cur.Revision, "source": cur.Source + fmt.Sprintf("\nLine %d.\n", line)})
				case k == 1:
					v := 1 + rng.Int64N(cur.Revision)
					code, body, err = h.call(token, srv.origin, "POST", fmt.Sprintf("/api/channels/%s/versions/%d/restore", ch.ID, v), nil)
				default:
					v := max(1, cur.Revision-rng.Int64N(6))
					code, body, err = h.call(token, srv.origin, "POST", fmt.Sprintf("/api/channels/%s/versions/%d/revert", ch.ID, v), nil)
				}
				if err != nil {
					results <- result{err: err}
					return
				}
				switch code {
				case 200:
					var p revertPlan
					if err := json.Unmarshal(body, &p); err != nil {
						results <- result{err: err}
						return
					}
					results <- result{plan: p}
					cur = p
				case 409: // a revert in the way of a later change: nothing changed
					if !bytes.Contains(body, []byte(`"revert-conflict"`)) {
						results <- result{err: fmt.Errorf("409 %s", body)}
						return
					}
				default:
					results <- result{err: fmt.Errorf("%d %s", code, body)}
					return
				}
			}
		}(last)
		n := 0
		for r := range results {
			if r.err != nil {
				t.Fatalf("round %d: %v", round, r.err)
			}
			if r.plan.Revision > last.Revision+1 {
				t.Fatalf("round %d: revision %d after %d", round, r.plan.Revision, last.Revision)
			}
			if r.plan.Revision == last.Revision+1 {
				last = r.plan
				acked[last.Revision] = last.Source
			}
			if n++; n == killAt {
				break
			}
		}
		time.Sleep(pause)
		srv.kill9(t)
		close(stop)
		for r := range results { // what was answered before the kill still counts; the stream ends
			if r.err == nil && r.plan.Revision == last.Revision+1 {
				last = r.plan
				acked[last.Revision] = last.Source
			}
		}
		srv = h.start("serve")

		var plan revertPlan
		h.api(srv.origin, "GET", "/api/channels/"+ch.ID+"/plan", nil, &plan)
		switch {
		case plan.Revision == last.Revision && plan.Source != last.Source:
			t.Fatalf("round %d: after the crash revision %d reads\n%q\nacknowledged as\n%q", round, plan.Revision, plan.Source, last.Source)
		case plan.Revision < last.Revision || plan.Revision > last.Revision+1:
			t.Fatalf("round %d: after the crash the plan is at revision %d; %d was the last acknowledged", round, plan.Revision, last.Revision)
		}
		for v, want := range acked {
			var got struct{ Source string }
			if code := h.api(srv.origin, "GET", fmt.Sprintf("/api/channels/%s/versions/%d", ch.ID, v), nil, &got); code != 200 || got.Source != want {
				t.Fatalf("round %d: version %d reads %d %q, acknowledged as %q", round, v, code, got.Source, want)
			}
		}
		if plan.Revision > last.Revision {
			acked[plan.Revision] = plan.Source
		}
		last = plan
	}
	var vs struct {
		Versions []struct {
			Author struct{ Kind string }
		}
	}
	h.api(srv.origin, "GET", "/api/channels/"+ch.ID+"/versions?limit=200", nil, &vs)
	for _, v := range vs.Versions {
		switch v.Author.Kind {
		case "revert":
			reverts++
		case "restore":
			restores++
		}
	}
	t.Logf("%d versions acknowledged, %d reverts and %d restores kept", len(acked), reverts, restores)
	if reverts == 0 || restores == 0 {
		t.Errorf("the stream made %d reverts and %d restores", reverts, restores)
	}
}
