package app

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/instance"
)

func TestCatalogCreateAndRead(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")

	generated := ta.CreateDocument("octo/plans", "")
	if generated.Title != "Untitled plan" || generated.URL != "/documents/octo/plans/untitled-plan" {
		t.Errorf("generated: %+v", generated)
	}

	r := ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "  Été à Zürich — plan  "})
	apptest.Want(t, r, 201, "")
	var ch channelJSON
	r.JSON(t, &ch)
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
	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "E\u0301TE\u0301 À ZÜRICH — PLAN"}), 409, "title-taken")
	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": strings.Repeat("x", 121)}), 400, "invalid-title")
	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", map[string]string{"title": " \t "}), 400, "invalid-title")
	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/plans/channels", `{"title": "x", "extra": 1}`), 400, "invalid-json")
	apptest.Want(t, ta.Do("POST", "/api/repositories/octo/nope/channels", nil), 404, "repository-not-found")

	var got channelJSON
	ta.Do("GET", "/api/channels/"+ch.ID, nil).JSON(t, &got)
	if got != ch {
		t.Errorf("read by ID: %+v", got)
	}
	// The slug route takes the decomposed spelling too.
	r = ta.Do("GET", "/api/repositories/octo/plans/documents/"+url.PathEscape("e\u0301te\u0301-à-zürich-plan"), nil)
	apptest.Want(t, r, 200, "")
	apptest.Want(t, ta.Do("GET", "/api/channels/"+strings.ToUpper(ch.ID), nil), 400, "invalid-channel-id")
	apptest.Want(t, ta.Do("GET", "/api/channels/0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f", nil), 404, "channel-not-found")
}

func TestCatalogRenameArchiveDelete(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	ch := ta.CreateDocument("octo/plans", "Launch plan")
	path := "/api/channels/" + ch.ID

	var same channelJSON
	ta.Do("PATCH", path, map[string]string{"title": "Launch plan"}).JSON(t, &same)
	if same.UpdatedAt != ch.UpdatedAt {
		t.Errorf("same title moved updatedAt")
	}
	var renamed channelJSON
	r := ta.Do("PATCH", path, map[string]string{"title": "Go-live plan"})
	apptest.Want(t, r, 200, "")
	r.JSON(t, &renamed)
	if renamed.Slug != "go-live-plan" || renamed.ID != ch.ID || renamed.UpdatedAt == ch.UpdatedAt {
		t.Errorf("renamed: %+v", renamed)
	}
	for _, slug := range []string{"launch-plan", "go-live-plan"} {
		var bySlug channelJSON
		ta.Do("GET", "/api/repositories/octo/plans/documents/"+slug, nil).JSON(t, &bySlug)
		if bySlug.ID != ch.ID || bySlug.URL != "/documents/octo/plans/go-live-plan" {
			t.Errorf("alias %s: %+v", slug, bySlug)
		}
	}
	// The alias cannot be rebound.
	other := ta.CreateDocument("octo/plans", "Launch plan")
	if other.Slug != "launch-plan-2" {
		t.Errorf("alias rebound: %+v", other)
	}

	apptest.Want(t, ta.Do("DELETE", path, nil), 409, "channel-not-archived")
	var archived channelJSON
	ta.Do("POST", path+"/archive", nil).JSON(t, &archived)
	if archived.ArchivedAt == nil {
		t.Fatalf("archive: %+v", archived)
	}
	var again channelJSON
	ta.Do("POST", path+"/archive", nil).JSON(t, &again)
	if *again.ArchivedAt != *archived.ArchivedAt || again.UpdatedAt != archived.UpdatedAt {
		t.Errorf("second archive changed the document: %+v", again)
	}
	apptest.Want(t, ta.Do("PATCH", path, map[string]string{"title": "Nope"}), 409, "channel-archived")
	// Archived documents still read by ID and by old slug.
	apptest.Want(t, ta.Do("GET", path, nil), 200, "")
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/documents/launch-plan", nil), 200, "")

	var restored channelJSON
	ta.Do("POST", path+"/restore", nil).JSON(t, &restored)
	if restored.ArchivedAt != nil {
		t.Errorf("restore: %+v", restored)
	}
	ta.Do("POST", path+"/archive", nil)
	apptest.Want(t, ta.Do("DELETE", path, nil), 204, "")
	apptest.Want(t, ta.Do("GET", path, nil), 404, "channel-not-found")
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/documents/go-live-plan", nil), 404, "channel-not-found")
	apptest.Want(t, ta.Do("DELETE", path, nil), 404, "channel-not-found")
}

func TestCatalogListing(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	for i := range 12 {
		ta.CreateDocument("octo/plans", fmt.Sprintf("Plan %02d", i))
	}
	straße := ta.CreateDocument("octo/plans", "Straße survey")
	old := ta.CreateDocument("octo/plans", "Old notes")
	ta.Do("POST", "/api/channels/"+old.ID+"/archive", nil)

	type page struct {
		Channels   []channelJSON
		NextCursor *string
	}
	var listed []channelJSON
	q := "/api/repositories/octo/plans/channels?limit=5"
	cursor := ""
	for {
		var p page
		r := ta.Do("GET", q+cursor, nil)
		apptest.Want(t, r, 200, "")
		r.JSON(t, &p)
		listed = append(listed, p.Channels...)
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	// Newest first, by updatedAt and then ID (documents made in the same
	// millisecond tie): the last one made is among the first.
	if len(listed) != 13 || listed[0].UpdatedAt != straße.UpdatedAt {
		t.Fatalf("paged %d, first %+v; want 13 from one updated at %s", len(listed), listed[0], straße.UpdatedAt)
	}
	for i := 1; i < len(listed); i++ {
		a, b := listed[i-1], listed[i]
		if a.UpdatedAt < b.UpdatedAt || a.UpdatedAt == b.UpdatedAt && a.ID < b.ID {
			t.Errorf("listed %s (%s) before %s (%s)", a.ID, a.UpdatedAt, b.ID, b.UpdatedAt)
		}
	}

	var p page
	ta.Do("GET", "/api/repositories/octo/plans/channels?query=STRASSE", nil).JSON(t, &p)
	if len(p.Channels) != 1 || p.Channels[0].ID != straße.ID {
		t.Errorf("query STRASSE: %+v", p.Channels)
	}
	ta.Do("GET", "/api/repositories/octo/plans/channels?includeArchived=true&limit=1", nil).JSON(t, &p)
	if len(p.Channels) != 1 || p.Channels[0].ID != old.ID || p.NextCursor == nil {
		t.Fatalf("includeArchived: %+v", p)
	}
	// A cursor is bound to its search and archive mode.
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/channels?cursor="+url.QueryEscape(*p.NextCursor), nil), 400, "invalid-cursor")
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/channels?includeArchived=true&query=plan&cursor="+url.QueryEscape(*p.NextCursor), nil), 400, "invalid-cursor")
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/channels?includeArchived=true&cursor="+url.QueryEscape(*p.NextCursor), nil), 200, "")
	for _, bad := range []string{"limit=0", "limit=101", "limit=ten", "includeArchived=yes", "cursor=%21%21"} {
		r := ta.Do("GET", "/api/repositories/octo/plans/channels?"+bad, nil)
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

	r := ta.Do("POST", "/api/repositories", map[string]string{"name": "octo/plans", "path": dir})
	apptest.Want(t, r, 201, "")
	var repo repositoryJSON
	r.JSON(t, &repo)
	if !strings.HasPrefix(repo.NodeID, "local:") || repo.Name != "octo/plans" || repo.Path != dir {
		t.Errorf("created %+v", repo)
	}
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "OCTO/Plans"}), 409, "repository-exists")
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "bad name/x"}), 400, "invalid-repository")
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "o/x", "path": filepath.Join(dir, "missing")}), 400, "invalid-path")
	apptest.Want(t, ta.Do("POST", "/api/repositories", map[string]string{"name": "o/x", "path": file}), 400, "invalid-path")

	var list struct{ Repositories []repositoryJSON }
	ta.Do("GET", "/api/repositories", nil).JSON(t, &list)
	if len(list.Repositories) != 1 || list.Repositories[0].NodeID != repo.NodeID || list.Repositories[0].Path != dir {
		t.Errorf("list %+v", list)
	}
}

func TestAccessRules(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// Without the session: 401 JSON for the API, a small page for the UI.
	r := ta.Request(anon, "GET", "/api/repositories", nil, nil)
	apptest.Want(t, r, 401, "unauthorized")
	r = ta.Request(anon, "GET", "/documents/octo/plans", nil, nil)
	if r.Status != 401 || !strings.Contains(string(r.Body), "chopin open") {
		t.Errorf("UI without session: %d %s", r.Status, r.Body)
	}
	// Health needs nothing.
	apptest.Want(t, ta.Request(anon, "GET", "/healthz", nil, nil), 200, "")

	// State changes from the browser need the exact Origin.
	for _, origin := range []string{"", "http://evil.example", strings.Replace(ta.app.URL(), "127.0.0.1", "localhost", 1)} {
		r = ta.Request(ta.Browser, "POST", "/api/repositories/octo/plans/channels", nil, map[string]string{"Origin": origin})
		apptest.Want(t, r, 403, "forbidden-origin")
	}
	apptest.Want(t, ta.Request(ta.Browser, "GET", "/api/repositories", nil, nil), 200, "")

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
	r = ta.Request(anon, "GET", strings.TrimPrefix(link, ta.app.URL()), nil, nil)
	if r.Status != http.StatusSeeOther {
		t.Fatalf("launch: %d", r.Status)
	}
	cookie := r.Header.Get("Set-Cookie")
	for _, attr := range []string{"chopin_session=", "HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("cookie %q lacks %s", cookie, attr)
		}
	}
	r = ta.Request(anon, "GET", strings.TrimPrefix(link, ta.app.URL()), nil, nil)
	if r.Status != http.StatusForbidden {
		t.Errorf("second use of a launch link: %d", r.Status)
	}

	// Scripts use the agent token; a wrong one is 401.
	token, err := instance.ReadAgentToken(ta.app.cfg.ConfigDir)
	if err != nil {
		t.Fatal(err)
	}
	r = ta.Request(anon, "POST", "/api/repositories/octo/plans/channels", map[string]string{"title": "From a script"},
		map[string]string{"Authorization": "Bearer " + token})
	apptest.Want(t, r, 201, "")
	r = ta.Request(anon, "GET", "/api/repositories", nil, map[string]string{"Authorization": "Bearer chopin_a_wrong"})
	apptest.Want(t, r, 401, "unauthorized")
	r = ta.Request(anon, "POST", "/api/launch-links", nil, map[string]string{"Authorization": "Bearer " + token})
	apptest.Want(t, r, 201, "")

	// Unknown API paths are JSON; research is not offered.
	apptest.Want(t, ta.Do("GET", "/api/nothing/here", nil), 404, "not-found")
	ch := ta.CreateDocument("octo/plans", "Doc")
	apptest.Want(t, ta.Do("POST", "/api/channels/"+ch.ID+"/research-workspaces", map[string]string{}), 404, "research-unavailable")
	apptest.Want(t, ta.Do("GET", "/api/channels/"+ch.ID+"/research-workspaces/w1", nil), 404, "research-unavailable")

	var s sessionJSON
	ta.Do("GET", "/api/session", nil).JSON(t, &s)
	if s.Login != "ada" || s.AuthMode != "local" || s.Origin != ta.app.URL() || s.AgentURL == "" {
		t.Errorf("session %+v", s)
	}
}
