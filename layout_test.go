package main

// This file keeps the layout of DESIGN.md section 2 true: the import graph
// (every package has a rule, and imports only what its rule allows), one
// package doc per package, and the README's "Layout" and "Documentation"
// sections naming exactly what is in the tree. Each check is a function over
// what `go list` reports, so its table test can show it failing.

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/chopin-desktop/chopin"

// layout is the import graph: for each of the module's packages (by its path
// inside the module, "" for main), the module's packages it may import. A
// package with no entry here fails TestLayout: place it in DESIGN.md's
// layout first, then here.
var layout = map[string][]string{
	"":                    {"cli", "app"},
	"cli":                 {"config", "instance", "version", "ident", "fault", "planner", "acp", "checkout", "assets", "modelserver"},
	"config":              {"agentconn/wire", "ident"},
	"instance":            {},
	"version":             {},
	"ident":               {"fault"},
	"textrule":            {},
	"app":                 {"config", "instance", "version", "ident", "store", "room", "plannerhost", "agentconn", "agentconn/wire", "mcpserver", "jobs", "assets", "fault", "picture", "checkout", "redact", "textrule", "modelserver"},
	"jobs":                {},
	"app/apptest":         {},
	"store":               {"fault", "ident", "textrule"},
	"room":                {"agentconn/wire", "fault", "picture", "textrule"},
	"plannerhost":         {"agentconn", "agentconn/wire", "room", "redact", "picture"},
	"mcpserver":           {"room", "fault", "picture", "textrule"},
	"agentconn":           {"agentconn/wire"},
	"agentconn/wire":      {"textrule"},
	"agentconn/client":    {"agentconn/wire"},
	"planner":             {"agentconn/client", "agentconn/wire", "checkout", "redact"},
	"acp":                 {"agentconn/client", "agentconn/wire", "checkout", "redact"},
	"checkout":            {},
	"modelserver":         {},
	"redact":              {},
	"picture":             {},
	"picture/picturetest": {},
	"store/storetest":     {},
	"fault":               {},
	"assets":              {},
	"assets/build":        {},
	"cmd/chopin-bench":    {"store", "picture", "agentconn/client", "agentconn/wire", "app/apptest"},
	// Links everything chopin links, to time their start-up (see its doc).
	"cmd/chopin-bench/startfloor": {"app", "cli"},
}

// confined are outside packages that only some of the module's packages may
// import: the HTTP framework belongs to app, the SQL driver to store (and to
// store/storetest, which damages a database file for tests, to
// app/apptest's bare relay, the baseline benchmarks and cmd/chopin-bench
// measure the app against, which writes a SQLite file of its own; the
// harness also seeds and queries catalogs directly, and its start-up floor
// opens chopin's database as the store does).
var confined = map[string][]string{
	"github.com/labstack/echo": {"app"},
	"database/sql":             {"store", "store/storetest", "cmd/chopin-bench", "cmd/chopin-bench/startfloor", "app/apptest"},
	"modernc.org/sqlite":       {"store", "store/storetest", "cmd/chopin-bench", "cmd/chopin-bench/startfloor", "app/apptest"},
}

// listedPackage is what the checks read of `go list -json`.
type listedPackage struct {
	ImportPath     string
	Name           string
	Dir            string
	Imports        []string
	GoFiles        []string
	IgnoredGoFiles []string
	// Docs counts the package doc comments among its files; the test fills
	// it in by parsing them.
	Docs []string `json:"-"`
}

func (p listedPackage) own() string {
	return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
}

// checkImports returns one line for each package without a rule and each
// import its rule does not allow.
func checkImports(pkgs []listedPackage, rules map[string][]string) []string {
	var problems []string
	for _, p := range pkgs {
		allowed, ok := rules[p.own()]
		if !ok {
			problems = append(problems, fmt.Sprintf("package %s has no rule in the layout table", p.ImportPath))
			continue
		}
		switch path.Base(p.own()) {
		case "util", "utils", "common", "types", "models", "helpers":
			problems = append(problems, fmt.Sprintf("package %s: name a package for what it is", p.ImportPath))
		}
		for _, imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				if dep := strings.TrimPrefix(imp, module+"/"); !slices.Contains(allowed, dep) {
					problems = append(problems, fmt.Sprintf("%s imports %s, which the layout does not allow", p.ImportPath, imp))
				}
				continue
			}
			for outside, owners := range confined {
				if (imp == outside || strings.HasPrefix(imp, outside+"/")) && !slices.Contains(owners, p.own()) {
					problems = append(problems, fmt.Sprintf("%s imports %s, which only %s may", p.ImportPath, imp, strings.Join(owners, ", ")))
				}
			}
		}
	}
	return problems
}

// checkDocs returns one line for each package that has no package doc, or
// more than one, or one that does not start as Go's conventions say.
func checkDocs(pkgs []listedPackage) []string {
	var problems []string
	for _, p := range pkgs {
		switch len(p.Docs) {
		case 0:
			problems = append(problems, fmt.Sprintf("package %s has no package doc (a // Package %s ... comment in doc.go)", p.ImportPath, p.Name))
			continue
		case 1:
		default:
			problems = append(problems, fmt.Sprintf("package %s has %d package docs; keep exactly one", p.ImportPath, len(p.Docs)))
			continue
		}
		want := "Package " + p.Name + " "
		if p.Name == "main" {
			want = "Command "
		}
		if !strings.HasPrefix(p.Docs[0], want) {
			problems = append(problems, fmt.Sprintf("package %s: its doc should start %q", p.ImportPath, want))
		}
	}
	return problems
}

// checkReadme returns one line for each package folder the README's layout
// block leaves out or names wrongly, and each file of docs/ its
// "Documentation" list leaves out or names wrongly.
func checkReadme(readme string, pkgs []listedPackage, docs []string) []string {
	var problems []string
	listed := map[string]bool{}
	_, block, _ := strings.Cut(section(readme, "## Layout"), "```\n")
	block, _, _ = strings.Cut(block, "```")
	for _, line := range strings.Split(block, "\n") {
		// A folder is a first word with a slash: "room/", "agentconn/wire".
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "/") {
			listed[strings.TrimSuffix(f[0], "/")] = true
		}
	}
	dirs := map[string]bool{}
	for _, p := range pkgs {
		if p.own() != "" {
			dirs[p.own()] = true
		}
	}
	for d := range dirs {
		if !listed[d] {
			problems = append(problems, fmt.Sprintf("README.md's Layout does not list %s/", d))
		}
	}
	for d := range listed {
		if !dirs[d] && d != "ui" && d != "agents" && d != "docs" && d != "scripts" {
			problems = append(problems, fmt.Sprintf("README.md's Layout lists %s/, which is not a package of the tree", d))
		}
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^- `docs/([^`]+)`").FindAllStringSubmatch(section(readme, "## Documentation"), -1) {
		named[m[1]] = true
	}
	for _, d := range docs {
		if !named[d] {
			problems = append(problems, fmt.Sprintf("README.md's Documentation does not list docs/%s", d))
		}
		delete(named, d)
	}
	for d := range named {
		problems = append(problems, fmt.Sprintf("README.md's Documentation lists docs/%s, which does not exist", d))
	}
	slices.Sort(problems)
	return problems
}

// section is the text under a "## " heading, up to the next one.
func section(markdown, heading string) string {
	_, rest, ok := strings.Cut(markdown, "\n"+heading+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

func TestLayout(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < len(layout)-1 {
		t.Fatalf("go list found only %d packages; is the module path %s?", len(pkgs), module)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("docs")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, e := range entries {
		docs = append(docs, e.Name())
	}
	for _, problems := range [][]string{checkImports(pkgs, layout), checkDocs(pkgs), checkReadme(string(readme), pkgs, docs)} {
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// TestLayoutChecksFail shows each check catching what it is for, on made-up
// packages: a test that could not fail would keep nothing true.
func TestLayoutChecksFail(t *testing.T) {
	pkg := func(own, name string, imports []string, docs ...string) listedPackage {
		return listedPackage{ImportPath: path.Join(module, own), Name: name, Imports: imports, Docs: docs}
	}
	rules := map[string][]string{"room": {"fault"}, "fault": {}}
	readme := "# x\n\n## Layout\n\n```\nroom/   a live document\nfault/  errors\ngone/   not here\n```\n\n## Documentation\n\n- `docs/a.md`: a\n- `docs/b.md`: b\n\n## Next\n"
	cases := []struct {
		name     string
		problems []string
		want     string
	}{
		{"a package without a rule",
			checkImports([]listedPackage{pkg("newpkg", "newpkg", nil)}, rules),
			"package " + module + "/newpkg has no rule in the layout table"},
		{"an import the rule does not allow",
			checkImports([]listedPackage{pkg("room", "room", []string{module + "/store"})}, rules),
			"room imports " + module + "/store, which the layout does not allow"},
		{"an outside package confined to another",
			checkImports([]listedPackage{pkg("room", "room", []string{"database/sql"})}, rules),
			"room imports database/sql, which only store"},
		{"a package named for nothing",
			checkImports([]listedPackage{pkg("util", "util", nil)}, map[string][]string{"util": {}}),
			"name a package for what it is"},
		{"a package without a doc",
			checkDocs([]listedPackage{pkg("fault", "fault", nil)}),
			"has no package doc"},
		{"a package with two docs",
			checkDocs([]listedPackage{pkg("fault", "fault", nil, "Package fault is one.", "Package fault is two.")}),
			"has 2 package docs"},
		{"a doc that names another package",
			checkDocs([]listedPackage{pkg("fault", "fault", nil, "Package errs is ...")}),
			`its doc should start "Package fault "`},
		{"a package the README's layout leaves out",
			checkReadme(readme, []listedPackage{pkg("room", "room", nil), pkg("fault", "fault", nil), pkg("redact", "redact", nil)}, []string{"a.md", "b.md"}),
			"README.md's Layout does not list redact/"},
		{"a folder the README's layout names that is not there",
			checkReadme(readme, []listedPackage{pkg("room", "room", nil), pkg("fault", "fault", nil)}, []string{"a.md", "b.md"}),
			"README.md's Layout lists gone/"},
		{"a doc file the README leaves out",
			checkReadme(readme, nil, []string{"a.md", "b.md", "c.md"}),
			"does not list docs/c.md"},
		{"a doc file the README names that is not there",
			checkReadme(readme, nil, []string{"a.md"}),
			"lists docs/b.md, which does not exist"},
	}
	for _, c := range cases {
		found := false
		for _, p := range c.problems {
			found = found || strings.Contains(p, c.want)
		}
		if !found {
			t.Errorf("%s: want a problem containing %q, got %q", c.name, c.want, c.problems)
		}
	}
	// And the real tree's own packages pass the same checks as a baseline.
	if p := checkImports([]listedPackage{pkg("room", "room", []string{module + "/fault", "strings"})}, rules); len(p) != 0 {
		t.Errorf("an allowed import was refused: %q", p)
	}
}

// listPackages runs go list over the module and reads each package's doc
// comments from its files, those of other systems included.
func listPackages(t *testing.T) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, name := range append(slices.Clone(p.GoFiles), p.IgnoredGoFiles...) {
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if f.Doc != nil {
				p.Docs = append(p.Docs, f.Doc.Text())
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}
