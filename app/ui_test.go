package app

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/assets"
)

func TestBuiltFilesAreServedCompressed(t *testing.T) {
	ta := startApp(t)
	page := ta.Do("GET", "/documents/octo/plans", nil)
	apptest.Want(t, page, 200, "")
	m := regexp.MustCompile(`src="/(app-[A-Z0-9]+\.js)"`).FindSubmatch(page.Body)
	if m == nil {
		t.Fatalf("the page names no script: %s", page.Body)
	}
	script := string(m[1])
	plain, err := assets.ReadFile(script)
	if err != nil || len(plain) == 0 {
		t.Fatalf("ReadFile(%s): %v", script, err)
	}

	anon := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, accept := range []string{"gzip, deflate, br", ""} {
		req, _ := http.NewRequest("GET", ta.app.URL()+"/"+script, nil)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
			resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Fatalf("Accept-Encoding %q: %d %v", accept, resp.StatusCode, resp.Header)
		}
		if accept != "" {
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("not sent compressed: %v", resp.Header)
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(zr)
		}
		if !bytes.Equal(body, plain) {
			t.Errorf("Accept-Encoding %q: the script differs from the built one", accept)
		}
	}
	apptest.Want(t, ta.Request(anon, "GET", "/chunks/../../assets.go", nil, nil), 401, "")
}
