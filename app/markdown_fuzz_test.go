package app

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/jobs"
	"github.com/chopin-desktop/chopin/room"
)

// descriptionChunks is how a description job cuts a plan: at its outline's
// blocks (adapt_jobs.go), into chunks of at most jobs.ChunkBytes.
func descriptionChunks(text string) []string {
	return jobs.Chunks(text, blockOffsets(text, room.Blocks(text)))
}

// checkChunks checks what a description's chunks hold: the text again,
// each valid UTF-8 if the text is, no more than a job may read, and no
// chunk much over ChunkBytes.
func checkChunks(t testing.TB, text string, chunks []string) {
	t.Helper()
	if strings.Join(chunks, "") != text {
		t.Fatalf("the %d chunks do not make the text again", len(chunks))
	}
	if len(text) <= room.MaxSourceBytes && len(chunks) > jobs.MaxChunks {
		t.Fatalf("%d chunks of a plan of %d bytes, over %d", len(chunks), len(text), jobs.MaxChunks)
	}
	for i, c := range chunks {
		if len(c) > jobs.ChunkBytes+utf8.UTFMax*jobs.MaxChunks || utf8.ValidString(text) && !utf8.ValidString(c) {
			t.Fatalf("chunk %d: %d bytes, valid UTF-8 %v", i, len(c), utf8.ValidString(c))
		}
	}
}

// FuzzDescriptionChunks: any plan is cut into chunks that make it again,
// however its Markdown nests.
func FuzzDescriptionChunks(f *testing.F) {
	for _, s := range []string{
		"# Plan\n\nUse Postgres.\n", strings.Repeat(">", 5000) + "\n", strings.Repeat("- ", 3000) + "a\n",
		strings.Repeat("[a]: /u\n", 2000), strings.Repeat("<Callout>\n\n", 1000), strings.Repeat("a\n=\n", 3000),
		strings.Repeat("é", 9000) + "\n\n" + strings.Repeat("€", 9000), "```\n" + strings.Repeat("x\n\n", 5000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > room.MaxSourceBytes {
			return
		}
		checkChunks(t, text, descriptionChunks(text))
	})
}

// A plan at the size limit makes no more chunks than a job may read,
// whatever its characters: 256 KiB of three-byte characters made 33, each
// cut a byte or two short of 8 KiB, and its description was refused.
func TestDescriptionChunksOfAFullPlan(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("€", room.MaxSourceBytes/3) + "a",
		strings.Repeat("😀", room.MaxSourceBytes/4),
		strings.Repeat("é", room.MaxSourceBytes/2),
		strings.Repeat("Plan.\n\n", room.MaxSourceBytes/7),
		strings.Repeat(">", room.MaxSourceBytes),
	} {
		checkChunks(t, text, descriptionChunks(text))
	}
}
