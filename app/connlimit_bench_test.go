package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// BenchmarkRequestsBehindIdleCrowd is the server with the limits of a file
// limit of 1,024 (896 connections) while 1,000 idle keep-alive connections
// without credentials, more than it holds, stay open: the time a new
// connection waits for /healthz, and for a signed-in request.
//
//	go test -run '^$' -bench RequestsBehindIdleCrowd -benchtime 200x ./app
func BenchmarkRequestsBehindIdleCrowd(b *testing.B) {
	const crowd = 1000
	ta := startAppLimited(b, func(l *connLimits) { *l = defaultConnLimits(1024) })
	addr := strings.TrimPrefix(ta.URL(), "http://")
	idleCrowd(b, addr, crowd)
	// A new connection for every request: a client arriving in the crowd.
	fresh := &http.Client{Timeout: 15 * time.Second, Jar: ta.Browser.Jar, Transport: &http.Transport{DisableKeepAlives: true}}
	var healthz, signedIn time.Duration
	for b.Loop() {
		for i, path := range []string{"/healthz", "/api/session"} {
			t0 := time.Now()
			res, err := fresh.Get(ta.URL() + path)
			if err != nil {
				b.Fatalf("%s behind %d idle connections: %v", path, crowd, err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Fatalf("%s: %d", path, res.StatusCode)
			}
			if i == 0 {
				healthz += time.Since(t0)
			} else {
				signedIn += time.Since(t0)
			}
		}
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(healthz.Microseconds())/float64(b.N), "µs/healthz")
	b.ReportMetric(float64(signedIn.Microseconds())/float64(b.N), "µs/signed-in")
}
