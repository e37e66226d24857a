package app

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCatalogCreateAndRead(t *testing.T) {
	ta := startApp(t)
	ta.addRepository("octo/plans")

	generated := ta.createDocument("octo/plans", "")
	if generated.Title != "Untitled plan" || generated.URL != "/documents/octo/plans/untitled-plan" {
		t.Errorf("generated: %+v", generated)
	}

	r := ta.do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "  Été à Zürich — plan  "})
	want(t, r, 201, "")
	var ch channelJSON
	r.json(t, &ch)
	if ch.Title != "Été à Zürich — plan" || ch.Slug != "été-à-zürich-plan" || ch.Repository != "octo/plans" ||
		ch.ArchivedAt != nil || ch.DescriptionRevision != 0 || ch.Description != nil {
		t.Errorf("created: %+v", ch)
	}
	if loc := r.Header.Get("Location"); loc != ch.URL || loc != "/documents/octo/plans/"+url.PathEscape("été-à-zürich-plan") {
		t.Errorf("Location %q, url %q", loc, ch.URL)
	}
	if !strings.Contains(string(r.Body), `"archivedAt":null`) {
		t.Errorf("archivedAt must be present as null: %s", r.Body)
	}

	// Decomposed input is the same title, in any case.
	want(t, ta.do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "E\u0301TE\u0301 À ZÜRICH — PLAN"}), 409, "title-taken")
	want(t, ta.do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": strings.Repeat("x", 121)}), 400, "invalid-title")
	want(t, ta.do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": " \t "}), 400, "invalid-title")
	want(t, ta.do("POST", "/api/repositories/octo/plans/channels", `{"title": "x", "extra": 1}`), 400, "invalid-json")
	want(t, ta.do("POST", "/api/repositories/octo/nope/channels", nil), 404, "repository-not-found")

	var got channelJSON
	ta.do("GET", "/api/channels/"+ch.ID, nil).json(t, &got)
	if got != ch {
		t.Errorf("read by ID: %+v", got)
	}
	// The slug route takes the decomposed spelling too.
	r = ta.do("GET", "/api/repositories/octo/plans/documents/"+url.PathEscape("e\u0301te\u0301-à-zürich-plan"), nil)
	want(t, r, 200, "")
	want(t, ta.do("GET", "/api/channels/"+strings.ToUpper(ch.ID), nil), 400, "invalid-channel-id")
	want(t, ta.do("GET", "/api/channels/0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f", nil), 404, "channel-not-found")
}

func TestCatalogRenameArchiveDelete(t *testing.T) {
	ta := startApp(t)
	ta.addRepository("octo/plans")
	ch := ta.createDocument("octo/plans", "Launch plan")
	path := "/api/channels/" + ch.ID

	var same channelJSON
	ta.do("PATCH", path, map[string]string{"title": "Launch plan"}).json(t, &same)
	if same.UpdatedAt != ch.UpdatedAt {
		t.Errorf("same title moved updatedAt")
	}
	var renamed channelJSON
	r := ta.do("PATCH", path, map[string]string{"title": "Go-live plan"})
	want(t, r, 200, "")
	r.json(t, &renamed)
	if renamed.Slug != "go-live-plan" || renamed.ID != ch.ID || renamed.UpdatedAt == ch.UpdatedAt {
		t.Errorf("renamed: %+v", renamed)
	}
	for _, slug := range []string{"launch-plan", "go-live-plan"} {
		var bySlug channelJSON
		ta.do("GET", "/api/repositories/octo/plans/documents/"+slug, nil).json(t, &bySlug)
		if bySlug.ID != ch.ID || bySlug.URL != "/documents/octo/plans/go-live-plan" {
			t.Errorf("alias %s: %+v", slug, bySlug)
		}
	}
	// The alias cannot be rebound.
	other := ta.createDocument("octo/plans", "Launch plan")
	if other.Slug != "launch-plan-2" {
		t.Errorf("alias rebound: %+v", other)
	}

	want(t, ta.do("DELETE", path, nil), 409, "channel-not-archived")
	var archived channelJSON
	ta.do("POST", path+"/archive", nil).json(t, &archived)
	if archived.ArchivedAt == nil {
		t.Fatalf("archive: %+v", archived)
	}
	var again channelJSON
	ta.do("POST", path+"/archive", nil).json(t, &again)
	if *again.ArchivedAt != *archived.ArchivedAt || again.UpdatedAt != archived.UpdatedAt {
		t.Errorf("second archive changed the document: %+v", again)
	}
	want(t, ta.do("PATCH", path, map[string]string{"title": "Nope"}), 409, "channel-archived")
	// Archived documents still read by ID and by old slug.
	want(t, ta.do("GET", path, nil), 200, "")
	want(t, ta.do("GET", "/api/repositories/octo/plans/documents/launch-plan", nil), 200, "")

	var restored channelJSON
	ta.do("POST", path+"/restore", nil).json(t, &restored)
	if restored.ArchivedAt != nil {
		t.Errorf("restore: %+v", restored)
	}
	ta.do("POST", path+"/archive", nil)
	want(t, ta.do("DELETE", path, nil), 204, "")
	want(t, ta.do("GET", path, nil), 404, "channel-not-found")
	want(t, ta.do("GET", "/api/repositories/octo/plans/documents/go-live-plan", nil), 404, "channel-not-found")
	want(t, ta.do("DELETE", path, nil), 404, "channel-not-found")
}

func TestCatalogListing(t *testing.T) {
	ta := startApp(t)
	ta.addRepository("octo/plans")
	for i := range 12 {
		ta.createDocument("octo/plans", fmt.Sprintf("Plan %02d", i))
	}
	straße := ta.createDocument("octo/plans", "Straße survey")
	old := ta.createDocument("octo/plans", "Old notes")
	ta.do("POST", "/api/channels/"+old.ID+"/archive", nil)

	type page struct {
		Channels   []channelJSON
		NextCursor *string
	}
	var ids []string
	q := "/api/repositories/octo/plans/channels?limit=5"
	cursor := ""
	for {
		var p page
		r := ta.do("GET", q+cursor, nil)
		want(t, r, 200, "")
		r.json(t, &p)
		for _, c := range p.Channels {
			ids = append(ids, c.ID)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if len(ids) != 13 || ids[0] != straße.ID {
		t.Errorf("paged %d, first %s", len(ids), ids[0])
	}

	var p page
	ta.do("GET", "/api/repositories/octo/plans/channels?query=STRASSE", nil).json(t, &p)
	if len(p.Channels) != 1 || p.Channels[0].ID != straße.ID {
		t.Errorf("query STRASSE: %+v", p.Channels)
	}
	ta.do("GET", "/api/repositories/octo/plans/channels?includeArchived=true&limit=1", nil).json(t, &p)
	if len(p.Channels) != 1 || p.Channels[0].ID != old.ID || p.NextCursor == nil {
		t.Fatalf("includeArchived: %+v", p)
	}
	// A cursor is bound to its search and archive mode.
	want(t, ta.do("GET", "/api/repositories/octo/plans/channels?cursor="+url.QueryEscape(*p.NextCursor), nil), 400, "invalid-cursor")
	want(t, ta.do("GET", "/api/repositories/octo/plans/channels?includeArchived=true&query=plan&cursor="+url.QueryEscape(*p.NextCursor), nil), 400, "invalid-cursor")
	want(t, ta.do("GET", "/api/repositories/octo/plans/channels?includeArchived=true&cursor="+url.QueryEscape(*p.NextCursor), nil), 200, "")
	for _, bad := range []string{"limit=0", "limit=101", "limit=ten", "includeArchived=yes", "cursor=%21%21"} {
		r := ta.do("GET", "/api/repositories/octo/plans/channels?"+bad, nil)
		if r.Status != 400 {
			t.Errorf("%s: %d %s", bad, r.Status, r.Body)
		}
	}
}

func TestRepositories(t *testing.T) {
	ta := startApp(t)
	dir := gitCheckout(t, "")
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)

	r := ta.do("POST", "/api/repositories", map[string]string{"name": "octo/plans", "path": dir})
	want(t, r, 201, "")
	var repo repositoryJSON
	r.json(t, &repo)
	if !strings.HasPrefix(repo.NodeID, "local:") || repo.Name != "octo/plans" || repo.Path != dir {
		t.Errorf("created %+v", repo)
	}
	want(t, ta.do("POST", "/api/repositories", map[string]string{"name": "OCTO/Plans"}), 409, "repository-exists")
	want(t, ta.do("POST", "/api/repositories", map[string]string{"name": "bad name/x"}), 400, "invalid-repository")
	want(t, ta.do("POST", "/api/repositories", map[string]string{"name": "o/x", "path": filepath.Join(dir, "missing")}), 400, "invalid-path")
	want(t, ta.do("POST", "/api/repositories", map[string]string{"name": "o/x", "path": file}), 400, "invalid-path")

	var list struct{ Repositories []repositoryJSON }
	ta.do("GET", "/api/repositories", nil).json(t, &list)
	if len(list.Repositories) != 1 || list.Repositories[0].NodeID != repo.NodeID || list.Repositories[0].Path != dir {
		t.Errorf("list %+v", list)
	}
}

func TestAccessRules(t *testing.T) {
	ta := startApp(t)
	ta.addRepository("octo/plans")
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// Without the session: 401 JSON for the API, a small page for the UI.
	r := ta.request(anon, "GET", "/api/repositories", nil, nil)
	want(t, r, 401, "unauthorized")
	r = ta.request(anon, "GET", "/documents/octo/plans", nil, nil)
	if r.Status != 401 || !strings.Contains(string(r.Body), "chopin open") {
		t.Errorf("UI without session: %d %s", r.Status, r.Body)
	}
	// Health needs nothing.
	want(t, ta.request(anon, "GET", "/healthz", nil, nil), 200, "")

	// State changes from the browser need the exact Origin.
	for _, origin := range []string{"", "http://evil.example", strings.Replace(ta.app.URL(), "127.0.0.1", "localhost", 1)} {
		r = ta.request(ta.browser, "POST", "/api/repositories/octo/plans/channels", nil, map[string]string{"Origin": origin})
		want(t, r, 403, "forbidden-origin")
	}
	want(t, ta.request(ta.browser, "GET", "/api/repositories", nil, nil), 200, "")

	// A foreign Host is refused everywhere (DNS rebinding).
	req, _ := http.NewRequest("GET", ta.app.URL()+"/healthz", nil)
	req.Host = "attacker.example"
	resp, err := anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}

	// Launch links work once.
	link := ta.app.NewLaunchURL()
	r = ta.request(anon, "GET", strings.TrimPrefix(link, ta.app.URL()), nil, nil)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("launch: %d", r.Status)
	}
	cookie := r.Header.Get("Set-Cookie")
	for _, attr := range []string{"chopin_session=", "HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("cookie %q lacks %s", cookie, attr)
		}
	}
	r = ta.request(anon, "GET", strings.TrimPrefix(link, ta.app.URL()), nil, nil)
	if r.Status != http.StatusForbidden {
		t.Errorf("second use of a launch link: %d", r.Status)
	}

	// Scripts use the agent token; a wrong one is 401.
	token, err := ReadAgentToken(ta.app.cfg.ConfigDir)
	if err != nil {
		t.Fatal(err)
	}
	r = ta.request(anon, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "From a script"},
		map[string]string{"Authorization": "Bearer " + token})
	want(t, r, 201, "")
	r = ta.request(anon, "GET", "/api/repositories", nil, map[string]string{"Authorization": "Bearer chopin_a_wrong"})
	want(t, r, 401, "unauthorized")
	r = ta.request(anon, "POST", "/api/launch-links", nil, map[string]string{"Authorization": "Bearer " + token})
	want(t, r, 201, "")

	// Unknown API paths are JSON; research is not offered.
	want(t, ta.do("GET", "/api/nothing/here", nil), 404, "not-found")
	ch := ta.createDocument("octo/plans", "Doc")
	want(t, ta.do("POST", "/api/channels/"+ch.ID+"/research-workspaces", map[string]string{}), 404, "research-unavailable")
	want(t, ta.do("GET", "/api/channels/"+ch.ID+"/research-workspaces/w1", nil), 404, "research-unavailable")

	var s sessionJSON
	ta.do("GET", "/api/session", nil).json(t, &s)
	if s.Login != "ada" || s.AuthMode != "local" || s.Origin != ta.app.URL() || s.AgentURL == "" {
		t.Errorf("session %+v", s)
	}
}
