package app

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/store"
)

// A backup, an export and the plan (whose outline can cost seconds) are
// made only for Chopin's own page or a script with the agent token:
// another page on this computer (another port of 127.0.0.1 is the same
// site, so the SameSite=Strict cookie comes along) cannot start them.
func TestCostlyGetsNeedChopinsOwnPage(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Launch")
	bearer := &http.Client{Transport: bearerTransport{ta.Token}}
	for _, path := range []string{"/api/backup", "/api/channels/" + doc.ID + "/plan.md", "/api/channels/" + doc.ID + "/plan"} {
		for _, h := range []map[string]string{
			{"Sec-Fetch-Site": "same-site"},
			{"Sec-Fetch-Site": "cross-site"},
			{"Sec-Fetch-Site": "none"},
			{"Sec-Fetch-Site": "same-site", "Origin": ta.URL()},
			{"Origin": "http://127.0.0.1:1"},
			{"Origin": "null"},
			{"Sec-Fetch-Site": "same-origin", "Origin": "http://127.0.0.1:1"},
		} {
			r := ta.Request(ta.Browser, "GET", path, nil, h)
			if r.Status != 403 || r.Code() != "forbidden-origin" || !strings.Contains(string(r.Body), "Chopin's own page") {
				t.Errorf("GET %s from the browser with %v: %d %.200q", path, h, r.Status, r.Body)
			}
		}
		for _, h := range []map[string]string{
			{"Sec-Fetch-Site": "same-origin"},
			{"Sec-Fetch-Site": "same-origin", "Origin": ta.URL()},
			{}, // a browser too old to say
		} {
			if r := ta.Request(ta.Browser, "GET", path, nil, h); r.Status != 200 {
				t.Errorf("GET %s from the browser with %v: %d %.200q", path, h, r.Status, r.Body)
			}
		}
		if r := ta.Request(bearer, "GET", path, nil, nil); r.Status != 200 {
			t.Errorf("GET %s with the agent token: %d %.200q", path, r.Status, r.Body)
		}
		if r := ta.Request(bearer, "GET", path, nil, map[string]string{"Origin": "http://127.0.0.1:1"}); r.Status != 403 {
			t.Errorf("GET %s with the agent token and a foreign Origin: %d %.200q", path, r.Status, r.Body)
		}
	}
}

// Backups run one at a time: while one is being sent, another is refused
// with 409 backup-in-progress, and the next after it is made.
func TestBackupsRunOneAtATime(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Launch")
	// 24 MB of images that do not compress: more than the sockets buffer,
	// so a download nobody reads stays under way.
	for range 4 {
		data := make([]byte, 6<<20)
		rand.Read(data)
		sum := sha256.Sum256(data)
		if err := ta.app.Store().SaveImage(context.Background(), doc.ID, store.Image{SHA256: hex.EncodeToString(sum[:]),
			Ext: "png", MimeType: "image/png", Width: 1, Height: 1, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	// The first backup: its headers arrive, then nobody reads.
	stalled, err := net.Dial("tcp", strings.TrimPrefix(ta.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	stalled.(*net.TCPConn).SetReadBuffer(4096)
	req, _ := http.NewRequest("GET", ta.URL()+"/api/backup", nil)
	req.Header.Set("Authorization", "Bearer "+ta.Token())
	if err := req.Write(stalled); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReaderSize(stalled, 4096), req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("the first backup: %v %v", res, err)
	}

	second := ta.Request(ta.Browser, "GET", "/api/backup", nil, map[string]string{"Sec-Fetch-Site": "same-origin"})
	apptest.Want(t, second, 409, "backup-in-progress")
	if !strings.Contains(string(second.Body), "A backup is already being made") {
		t.Errorf("the second backup: %s", second.Body)
	}

	stalled.Close() // the first ends; the next is made
	for deadline := time.Now().Add(apptest.Wait); ; time.Sleep(10 * time.Millisecond) {
		r := ta.Request(ta.Browser, "GET", "/api/backup", nil, map[string]string{"Sec-Fetch-Site": "same-origin"})
		if r.Status == 200 {
			if len(r.Body) < 24<<20 {
				t.Errorf("the backup after it: %d bytes", len(r.Body))
			}
			break
		}
		apptest.Want(t, r, 409, "backup-in-progress") // the first is still ending
		if time.Now().After(deadline) {
			t.Fatal("the backup after the first is still refused")
		}
	}
}
