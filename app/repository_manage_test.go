package app

// Renaming and removing a repository through the real app: documents and
// their addresses survive a rename, a taken name is refused, a repository
// with active documents is removed only when told to archive them, and
// nothing is ever deleted (docs/http-api.md, "Repositories").

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/app/apptest"
	"github.com/chopin-desktop/chopin/cli"
	"github.com/chopin-desktop/chopin/config"
)

func (ta *testApp) repositoryNames(t *testing.T) []string {
	t.Helper()
	var list struct {
		Repositories []repositoryJSON `json:"repositories"`
	}
	ta.Do("GET", "/api/repositories", nil).JSON(t, &list)
	var names []string
	for _, r := range list.Repositories {
		names = append(names, r.Name)
	}
	return names
}

func TestRepositoryRename(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Launch")

	r := ta.Do("PATCH", "/api/repositories/octo/plans", map[string]string{"name": "octo/roadmap"})
	apptest.Want(t, r, 200, "")
	var got repositoryJSON
	r.JSON(t, &got)
	if got.Name != "octo/roadmap" || got.Owner != "octo" || got.Repo != "roadmap" {
		t.Fatalf("renamed to %+v", got)
	}
	if names := ta.repositoryNames(t); strings.Join(names, ",") != "octo/roadmap" {
		t.Errorf("listed: %v", names)
	}
	// The document is the same, at its new address.
	var ch apptest.Document
	ta.Do("GET", "/api/channels/"+doc.ID, nil).JSON(t, &ch)
	if ch.Repository != "octo/roadmap" || !strings.HasSuffix(ch.URL, "/documents/octo/roadmap/launch") {
		t.Errorf("after the rename the document is %+v", ch)
	}
	// A deep link with the old name still finds it, and its canonical URL.
	r = ta.Do("GET", "/api/repositories/octo/plans/documents/launch", nil)
	apptest.Want(t, r, 200, "")
	var byOld apptest.Document
	r.JSON(t, &byOld)
	if byOld.ID != doc.ID || byOld.URL != ch.URL {
		t.Errorf("the old address gave %+v", byOld)
	}
	var repo repositoryJSON
	ta.Do("GET", "/api/repositories/Octo/Plans", nil).JSON(t, &repo)
	if repo.Name != "octo/roadmap" {
		t.Errorf("the old name gave %+v", repo)
	}
	// New documents go through the old name too.
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/plans/channels", nil), 200, "")

	// A name another repository has, or had, is refused; so is a bad name.
	ta.AddRepository("octo/other")
	r = ta.Do("PATCH", "/api/repositories/octo/roadmap", map[string]string{"name": "Octo/Other"})
	apptest.Want(t, r, 409, "repository-exists")
	if !strings.Contains(string(r.Body), "repository octo/other is already registered; pick another name") {
		t.Errorf("taken: %s", r.Body)
	}
	r = ta.Do("PATCH", "/api/repositories/octo/other", map[string]string{"name": "octo/plans"})
	apptest.Want(t, r, 409, "repository-exists")
	if !strings.Contains(string(r.Body), "the name octo/plans was octo/roadmap's before a rename") {
		t.Errorf("a former name: %s", r.Body)
	}
	r = ta.Do("PATCH", "/api/repositories/octo/other", map[string]string{"name": "no slash"})
	apptest.Want(t, r, 400, "invalid-repository")
	if !strings.Contains(string(r.Body), "acme/website") {
		t.Errorf("the refusal gives no example: %s", r.Body)
	}
	if names := ta.repositoryNames(t); strings.Join(names, ",") != "octo/other,octo/roadmap" {
		t.Errorf("after the refusals: %v", names)
	}
	// Back to its own former name, and a change of letter case, are renames.
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/roadmap", map[string]string{"name": "octo/plans"}), 200, "")
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/plans", map[string]string{"name": "Octo/Plans"}), 200, "")
	ta.Do("GET", "/api/channels/"+doc.ID, nil).JSON(t, &ch)
	if ch.Repository != "Octo/Plans" {
		t.Errorf("after renaming back: %+v", ch)
	}
	// The name it had in between still leads to it.
	apptest.Want(t, ta.Do("GET", "/api/repositories/octo/roadmap/documents/launch", nil), 200, "")
}

func TestRepositoryRemove(t *testing.T) {
	ta := startApp(t)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Launch")

	// The choice is explicit.
	apptest.Want(t, ta.Do("DELETE", "/api/repositories/octo/plans", nil), 400, "invalid-query")
	// Refused while it has an active document; nothing changes.
	r := ta.Do("DELETE", "/api/repositories/octo/plans?documents=refuse", nil)
	apptest.Want(t, r, 409, "repository-has-documents")
	if !strings.Contains(string(r.Body), "repository octo/plans has 1 active document") {
		t.Errorf("refusal: %s", r.Body)
	}
	if names := ta.repositoryNames(t); strings.Join(names, ",") != "octo/plans" {
		t.Errorf("after the refusal: %v", names)
	}
	if ch := ta.channelNow(t, doc.ID); ch.ArchivedAt != nil {
		t.Errorf("the refusal archived the document")
	}
	// Archiving them: removed, the document archived and kept.
	apptest.Want(t, ta.Do("DELETE", "/api/repositories/octo/plans?documents=archive", nil), 204, "")
	if names := ta.repositoryNames(t); len(names) != 0 {
		t.Errorf("still listed: %v", names)
	}
	if ch := ta.channelNow(t, doc.ID); ch.ArchivedAt == nil {
		t.Errorf("the document was not archived: %+v", ch)
	}
	r = ta.Do("GET", "/api/repositories/octo/plans", nil)
	apptest.Want(t, r, 404, "repository-removed")
	if !strings.Contains(string(r.Body), "add it again") {
		t.Errorf("removed: %s", r.Body)
	}
	// A rename to the removed one's name is refused: its documents keep it.
	ta.AddRepository("octo/other")
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/other", map[string]string{"name": "octo/plans"}), 409, "repository-exists")
	// Adding the name again brings it back with its archived document.
	ta.AddRepository("octo/plans")
	r = ta.Do("GET", "/api/repositories/octo/plans/documents/launch", nil)
	apptest.Want(t, r, 200, "")
	// A repository whose documents are all archived is removed when asked to refuse.
	apptest.Want(t, ta.Do("DELETE", "/api/repositories/octo/plans?documents=refuse", nil), 204, "")
	// And one with none.
	apptest.Want(t, ta.Do("DELETE", "/api/repositories/octo/other?documents=refuse", nil), 204, "")
	apptest.Want(t, ta.Do("DELETE", "/api/repositories/octo/other?documents=refuse", nil), 404, "repository-removed")
	apptest.Want(t, ta.Do("DELETE", "/api/repositories/no/such?documents=refuse", nil), 404, "repository-not-found")
}

// The first run's personal repository is named after the local account.
func TestRepositoryPersonal(t *testing.T) {
	ta := startApp(t) // login ada
	var list struct {
		Personal string `json:"personal"`
	}
	ta.Do("GET", "/api/repositories", nil).JSON(t, &list)
	if list.Personal != "ada/plans" {
		t.Fatalf("personal: %q", list.Personal)
	}
	ta.AddRepository(list.Personal)
	cfg := testConfig(t, t.TempDir())
	cfg.Login = "root"
	root := startAppWith(t, cfg)
	root.Do("GET", "/api/repositories", nil).JSON(t, &list)
	if list.Personal != "me/plans" {
		t.Errorf("for root: %q", list.Personal)
	}
}

// A repository chopin.toml names is said to be; renamed, the config's
// name still applies to it; removed, it stays removed at the next start.
func TestRepositoryConfigNamed(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(t, dir)
	cfg.Repositories = []config.Repository{{Name: "octo/plans"}}
	ta := startAppWith(t, cfg)
	var repo repositoryJSON
	ta.Do("GET", "/api/repositories/octo/plans", nil).JSON(t, &repo)
	if !repo.Config {
		t.Errorf("not marked as the config's: %+v", repo)
	}
	apptest.Want(t, ta.Do("PATCH", "/api/repositories/octo/plans", map[string]string{"name": "octo/roadmap"}), 200, "")
	ta.Do("GET", "/api/repositories/octo/roadmap", nil).JSON(t, &repo)
	if !repo.Config {
		t.Errorf("renamed, not marked as the config's: %+v", repo)
	}
	ta.Stop()

	ta = startAppWith(t, cfg)
	if names := ta.repositoryNames(t); strings.Join(names, ",") != "octo/roadmap" {
		t.Fatalf("after a restart with the config's old name: %v", names)
	}
	apptest.Want(t, ta.Do("DELETE", "/api/repositories/octo/roadmap?documents=refuse", nil), 204, "")
	ta.Stop()

	ta = startAppWith(t, cfg)
	if names := ta.repositoryNames(t); len(names) != 0 {
		t.Errorf("the config brought a removed repository back: %v", names)
	}
	if _, err := ta.app.store.RepositoryByName(context.Background(), "octo", "plans"); err == nil {
		t.Errorf("the removed repository is found by name")
	}
}

func runRepo(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := &cli.CLI{Local: Local{}, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	code := c.Run(context.Background(), append([]string{"repo"}, args...))
	return code, stdout.String(), stderr.String()
}

// chopin repo rename and remove, over the running Chopin's HTTP API.
func TestRepoRenameRemoveCLI(t *testing.T) {
	ta := startApp(t)
	env := ta.plannerEnv(nil)
	ta.AddRepository("octo/plans")
	doc := ta.CreateDocument("octo/plans", "Launch")
	ta.AddRepository("octo/other")

	code, out, errs := runRepo(t, env, "rename", "octo/plans", "octo/roadmap")
	if code != 0 || errs != "" || out != "Renamed octo/plans to octo/roadmap. Its documents keep their addresses: links with octo/plans lead to octo/roadmap.\n" {
		t.Errorf("rename: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs = runRepo(t, env, "rename", "octo/roadmap", "octo/other")
	if code != 1 || out != "" || errs != "chopin repo rename: Repository octo/other is already registered; pick another name.\n" {
		t.Errorf("taken: exit %d, %q, %q", code, out, errs)
	}
	code, _, errs = runRepo(t, env, "rename", "octo/roadmap", "roadmap")
	if code != 2 || !strings.Contains(errs, "such as acme/website") {
		t.Errorf("bad name: exit %d, %q", code, errs)
	}

	code, out, errs = runRepo(t, env, "remove", "octo/roadmap")
	if code != 1 || out != "" || !strings.Contains(errs, "Repository octo/roadmap has 1 active document; archive them first") ||
		!strings.Contains(errs, "Nothing was removed; to archive them and remove it, run ") ||
		!strings.Contains(errs, "repo remove octo/roadmap --archive-documents") {
		t.Errorf("remove with a document: exit %d, %q, %q", code, out, errs)
	}
	code, out, errs = runRepo(t, env, "remove", "octo/roadmap", "--archive-documents")
	if code != 0 || errs != "" || out != "Removed octo/roadmap. Its documents are kept, archived; add octo/roadmap again to get them back.\n" {
		t.Errorf("remove archiving: exit %d, %q, %q", code, out, errs)
	}
	if ch := ta.channelNow(t, doc.ID); ch.ArchivedAt == nil {
		t.Errorf("the document was not archived")
	}
	if code, _, errs := runRepo(t, env, "remove"); code != 2 || !strings.Contains(errs, "repo --help") {
		t.Errorf("remove with no name: exit %d, %q", code, errs)
	}
	if names := ta.repositoryNames(t); strings.Join(names, ",") != "octo/other" {
		t.Errorf("left: %v", names)
	}
}
