package ident

import (
	"strings"

	"github.com/google/uuid"

	"github.com/chopin-desktop/chopin/fault"
)

// ParseRepository splits "owner/name" and checks both parts against
// GitHub's rules, so a name registered here is one GitHub could also hold.
// A name that breaks them is a fault.Invalid with code invalid-repository.
func ParseRepository(full string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(full, "/")
	if !ok {
		return "", "", fault.Errorf(fault.Invalid, "invalid-repository", "%q is not owner/name; give both, such as acme/website", full)
	}
	if !validOwner(owner) {
		return "", "", fault.Errorf(fault.Invalid, "invalid-repository",
			"owner %q must be 1 to 39 letters, digits or single hyphens, not starting or ending with a hyphen, as acme in acme/website", owner)
	}
	if !validRepoName(name) {
		return "", "", fault.Errorf(fault.Invalid, "invalid-repository",
			"repository name %q must be 1 to 100 letters, digits, '.', '_' or '-', and not '.' or '..', as website in acme/website", name)
	}
	return owner, name, nil
}

func validOwner(s string) bool {
	if len(s) < 1 || len(s) > 39 || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for _, c := range []byte(s) {
		if !isASCIIAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

func validRepoName(s string) bool {
	if len(s) < 1 || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for _, c := range []byte(s) {
		if !isASCIIAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isASCIIAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// ValidDocumentID reports whether s is a document ID: a lowercase UUID of
// version 4 or 5.
func ValidDocumentID(s string) bool {
	u, err := uuid.Parse(s)
	if err != nil || len(s) != 36 || strings.ToLower(s) != s {
		return false
	}
	return u.Version() == 4 || u.Version() == 5
}
