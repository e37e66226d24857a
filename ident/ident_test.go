package ident

import (
	"errors"
	"strings"
	"testing"

	"github.com/chopin-desktop/chopin/fault"
)

func TestValidDocumentID(t *testing.T) {
	for id, want := range map[string]bool{
		"6b1c5a8e-0f4e-5b7a-9c2d-1e3f4a5b6c7d":   true,  // v5, as store.ChannelID makes them
		"0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f":   true,  // v4
		"0B5A3C1E-3F1D-4C2A-9F1E-2A3B4C5D6E7F":   false, // upper case
		"0b5a3c1e-3f1d-1c2a-9f1e-2a3b4c5d6e7f":   false, // v1
		"{0b5a3c1e-3f1d-4c2a-9f1e-2a3b4c5d6e7f}": false,
		"not-a-uuid":                             false,
	} {
		if ValidDocumentID(id) != want {
			t.Errorf("ValidDocumentID(%q) = %v", id, !want)
		}
	}
}

func isInvalidRepository(err error) bool {
	var fe *fault.Error
	return errors.As(err, &fe) && fe.Code == "invalid-repository" && errors.Is(err, fault.Invalid)
}

func TestParseRepository(t *testing.T) {
	valid := []string{"a/b", "chopin-desktop/chopin", "x/.github", "o/a_b.c-d", strings.Repeat("o", 39) + "/" + strings.Repeat("n", 100)}
	invalid := []string{"", "a", "a/", "/b", "a/b/c", "-a/b", "a-/b", "a--b/c", "a/.", "a/..", "a b/c", "a/b c",
		strings.Repeat("o", 40) + "/n", "o/" + strings.Repeat("n", 101), "o_o/n"}
	for _, s := range valid {
		if _, _, err := ParseRepository(s); err != nil {
			t.Errorf("ParseRepository(%q): %v", s, err)
		}
	}
	for _, s := range invalid {
		if _, _, err := ParseRepository(s); !isInvalidRepository(err) {
			t.Errorf("ParseRepository(%q) = %v, want invalid-repository", s, err)
		}
	}
}
