package app

import (
	"bufio"
	"io"
	"net"
	"net/http"
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
	saved, savedCap := serverTimeouts, testConnectionCap
	serverTimeouts.readHeader, serverTimeouts.read, serverTimeouts.idle = 300*time.Millisecond, 600*time.Millisecond, 300*time.Millisecond
	testConnectionCap = 16
	t.Cleanup(func() { serverTimeouts, testConnectionCap = saved, savedCap })
	ta := startApp(t)
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
	for range 3 * testConnectionCap {
		c := dial()
		crowd.Go(func() { io.WriteString(c, "GET /healthz HTTP/1.1\r\n"+host) })
	}
	crowd.Wait()
	res, err := (&http.Client{Timeout: 15 * time.Second}).Get(ta.URL() + "/healthz")
	if err != nil {
		t.Fatalf("/healthz behind %d slow connections: %v", 3*testConnectionCap, err)
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
}
