package app

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
)

// A WebSocket upgrade however its Upgrade header is spelled is held to the
// Origin rule, and /ws takes only the upgrade browsers send.
func TestEveryUpgradeIsCheckedForOrigin(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Upgrades")
	upgrade := func(origin string, up ...string) apptest.Response {
		h := map[string]string{"Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": origin}
		req, _ := http.NewRequest("GET", ta.URL()+"/ws?channel="+ch.ID, nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		for _, u := range up {
			req.Header.Add("Upgrade", u)
		}
		for _, c := range ta.Browser.Jar.Cookies(req.URL) {
			req.AddCookie(c)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body []byte
		if res.StatusCode != http.StatusSwitchingProtocols {
			body, _ = io.ReadAll(res.Body)
		}
		return apptest.Response{Status: res.StatusCode, Header: res.Header, Body: body}
	}
	for _, up := range [][]string{{"websocket"}, {"WebSocket"}, {"websocket, x"}, {"x, websocket"}, {"x", "websocket"}} {
		if r := upgrade("http://127.0.0.1:1", up...); r.Status != 403 || r.Code() != "forbidden-origin" {
			t.Errorf("Upgrade %q from another origin: %d %s", up, r.Status, r.Code())
		}
	}
	for _, up := range [][]string{{"websocket, x"}, {"x", "websocket"}} {
		if r := upgrade(ta.URL(), up...); r.Status != 400 || r.Code() != "websocket-required" {
			t.Errorf("Upgrade %q: %d %s", up, r.Status, r.Code())
		}
	}
	if r := upgrade(ta.URL(), "websocket"); r.Status != http.StatusSwitchingProtocols {
		t.Errorf("a browser's upgrade: %d %s", r.Status, r.Code())
	}
}

// Slow and idle connections are cut at the server's deadlines, and a crowd
// of them, more than the server holds at once, leaves /healthz answering.
func TestSlowConnectionsAreCut(t *testing.T) {
	const connCap = 16
	ta := startAppLimited(t, func(l *connLimits) {
		l.readHeader, l.read, l.idle = 300*time.Millisecond, 600*time.Millisecond, 300*time.Millisecond
		l.max, l.idleAnonymous = connCap, 8
	})
	addr := strings.TrimPrefix(ta.URL(), "http://")
	host := "Host: " + addr + "\r\n"

	closed := func(name string, c net.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("%s: still open after 10 s", name)
				}
				return
			}
		}
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	slowHeaders := dial()
	io.WriteString(slowHeaders, "GET /healthz HTTP/1.1\r\n"+host)
	closed("headers never finished", slowHeaders)

	slowBody := dial()
	io.WriteString(slowBody, "POST /api/launch-links HTTP/1.1\r\n"+host+"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	closed("a body that never arrives", slowBody)

	idle := dial()
	io.WriteString(idle, "GET /healthz HTTP/1.1\r\n"+host+"\r\n")
	closed("an idle keep-alive", idle)

	var crowd sync.WaitGroup
	for range 3 * connCap {
		c := dial()
		crowd.Go(func() { io.WriteString(c, "GET /healthz HTTP/1.1\r\n"+host) })
	}
	crowd.Wait()
	res, err := (&http.Client{Timeout: 15 * time.Second}).Get(ta.URL() + "/healthz")
	if err != nil {
		t.Fatalf("/healthz behind %d slow connections: %v", 3*connCap, err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/healthz: %d", res.StatusCode)
	}
}

func TestConnectionCapIsBelowTheFileLimit(t *testing.T) {
	files := raiseFileLimit()
	if n := connectionCap(files); n >= files && files > 64+filesReserved {
		t.Errorf("cap %d for a limit of %d files", n, files)
	}
	if connectionCap(1024) != 896 || connectionCap(100) != 64 {
		t.Errorf("caps %d, %d", connectionCap(1024), connectionCap(100))
	}
	if idleAnonymousCap(896) != 224 || idleAnonymousCap(64) != 16 || idleAnonymousCap(1<<20) != 256 {
		t.Errorf("idle caps %d, %d, %d", idleAnonymousCap(896), idleAnonymousCap(64), idleAnonymousCap(1<<20))
	}
}

// startAppLimited starts an app whose connection limits set changes.
func startAppLimited(t testing.TB, set func(*connLimits)) *testApp {
	t.Helper()
	a, err := New(testConfig(t, t.TempDir()), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	set(&a.conns)
	return &testApp{App: apptest.Serve(t, a), app: a}
}

// idleCrowd opens n keep-alive connections that each ask for /healthz
// once, without credentials, and then stay open and idle.
func idleCrowd(t testing.TB, addr string, n int) []net.Conn {
	t.Helper()
	var crowd []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(apptest.Wait))
		if res, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			res.Body.Close()
		}
		// (Past the cap, an older one is closed to make room for this one,
		// or this one waits: either way the crowd is in place.)
		c.SetReadDeadline(time.Time{})
		crowd = append(crowd, c)
	}
	return crowd
}

// A crowd of idle keep-alive connections without credentials, three times
// what the server holds, leaves /healthz and a signed-in request answered,
// and a signed-in browser's own idle connection open.
func TestIdleConnectionsCannotStarve(t *testing.T) {
	const connCap = 16
	ta := startAppLimited(t, func(l *connLimits) {
		l.max, l.idleAnonymous = connCap, 8
		l.idleUnderPressure = time.Hour // only the caps close connections here
	})
	addr := strings.TrimPrefix(ta.URL(), "http://")

	// A browser's keep-alive connection, signed in, left idle.
	mine, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	cookie := ""
	for _, c := range ta.Browser.Jar.Cookies(&url.URL{Scheme: "http", Host: addr}) {
		cookie = c.Name + "=" + c.Value
	}
	ask := func(what string) {
		t.Helper()
		io.WriteString(mine, "GET /api/session HTTP/1.1\r\nHost: "+addr+"\r\nCookie: "+cookie+"\r\n\r\n")
		mine.SetReadDeadline(time.Now().Add(apptest.Wait))
		res, err := http.ReadResponse(bufio.NewReader(mine), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: the signed-in connection: %v %v", what, res, err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	ask("before the crowd")

	idleCrowd(t, addr, 3*connCap)

	client := &http.Client{Timeout: 15 * time.Second, Jar: ta.Browser.Jar}
	res, err := client.Get(ta.URL() + "/healthz")
	if err != nil {
		t.Fatalf("/healthz behind %d idle connections: %v", 3*connCap, err)
	}
	res.Body.Close()
	res, err = client.Get(ta.URL() + "/api/session")
	if err != nil {
		t.Fatalf("a signed-in request behind %d idle connections: %v", 3*connCap, err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("a signed-in request: %d", res.StatusCode)
	}
	ask("after the crowd")
}

// Under pressure, a connection idle longer than idleUnderPressure is
// closed, well before the idle deadline.
func TestIdleUnderPressureIsShort(t *testing.T) {
	const connCap = 16
	ta := startAppLimited(t, func(l *connLimits) {
		l.max, l.idleAnonymous = connCap, connCap
		l.idleUnderPressure = 200 * time.Millisecond
	})
	addr := strings.TrimPrefix(ta.URL(), "http://")
	first := idleCrowd(t, addr, 1)[0]
	time.Sleep(300 * time.Millisecond) // idle past idleUnderPressure, far from the 2 minutes
	idleCrowd(t, addr, connCap/2+1)    // past half the cap: under pressure
	first.SetReadDeadline(time.Now().Add(apptest.Wait))
	if _, err := first.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection idle longest is still open under pressure: %v", err)
	}
}

// Clients arriving at once, each still sending its first request, do not
// close each other: only connections idle between requests count against
// idleAnonymous.
func TestArrivingCrowdIsServed(t *testing.T) {
	const arriving = 32
	ta := startAppLimited(t, func(l *connLimits) { l.max, l.idleAnonymous = 64, 4 })
	addr := strings.TrimPrefix(ta.URL(), "http://")
	var conns []net.Conn
	for range arriving {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n")
		conns = append(conns, c)
	}
	for i, c := range conns {
		io.WriteString(c, "\r\n")
		c.SetReadDeadline(time.Now().Add(apptest.Wait))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("client %d of %d arriving at once: %v %v", i+1, arriving, res, err)
		}
		res.Body.Close()
	}
}
