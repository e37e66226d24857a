package room

// Every refusal code has a kind, wherever in the package it is declared.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/fault"
)

func TestEveryCodeHasAKind(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "Code") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					code, _ := strconv.Unquote(lit.Value)
					declared++
					if _, ok := kinds[code]; !ok {
						t.Errorf("%s (%q) has no kind", name.Name, code)
					}
				}
			}
		}
	}
	if declared != len(kinds) {
		t.Errorf("%d codes are declared and %d have a kind; kinds names a code no constant declares", declared, len(kinds))
	}
	for code, k := range kinds {
		switch k {
		case fault.Invalid, fault.NotFound, fault.Conflict, fault.TooLarge, fault.Forbidden, fault.Internal:
		default:
			t.Errorf("%s has the unknown kind %q", code, k)
		}
	}
	if k := (&Error{Code: "no-such-code"}).Kind(); k != fault.Internal {
		t.Errorf("an undeclared code is %q, want internal", k)
	}
}
