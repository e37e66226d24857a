package store

import (
	"crypto/sha256"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Slug derives a document's readable route segment from its title: Unicode
// NFC, lower case, letters, numbers and combining marks kept, every run of
// anything else one hyphen, no hyphen at either end. A title with nothing
// readable in it gets "document".
func Slug(title string) string {
	s := norm.NFC.String(strings.ToLower(norm.NFC.String(title)))
	var b strings.Builder
	pendingHyphen := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r) {
			if pendingHyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			pendingHyphen = false
			b.WriteRune(r)
			continue
		}
		pendingHyphen = true
	}
	if b.Len() == 0 {
		return "document"
	}
	return b.String()
}

var folder = cases.Fold()

// foldKey is the form in which two strings that differ only in letter case
// or in Unicode composition compare equal: titles and searches use it.
func foldKey(s string) string {
	return norm.NFC.String(folder.String(norm.NFC.String(s)))
}

// channelNamespace scopes the UUIDv5-shaped channel IDs to Chopin.
var channelNamespace = uuid.MustParse("6f0c1f1e-8d8b-4a4c-9b3e-3c1d0f6a2b7e")

// ChannelID derives a document ID from the repository's node ID and a key:
// SHA-256 over both, shaped as a lowercase version-5 UUID. Browser creation
// passes a fresh random UUID as the key, so every creation is a new
// document; idempotent creation passes the caller's idempotency key, so a
// retry resolves to the same document.
func ChannelID(repositoryNodeID, key string) string {
	return uuid.NewHash(sha256.New(), channelNamespace, []byte(repositoryNodeID+"\x00"+key), 5).String()
}
