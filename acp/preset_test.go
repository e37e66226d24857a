//go:build unix

package acp

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestGeminiACPFlag: --acp when Gemini CLI's help lists it, else (an older
// version, or a help that fails) --experimental-acp, which every version
// with ACP takes.
func TestGeminiACPFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, script, want string }{
		{"lists --acp", "printf '  --acp                 Starts the agent in ACP mode\\n  --experimental-acp    deprecated\\n'", "--acp"},
		{"before --acp", "printf '  --experimental-acp    Starts the agent in ACP mode\\n  --acp-like-words\\n'", "--experimental-acp"},
		{"a mention in prose", "printf 'Use the flag --acp for ACP.\\n'", "--experimental-acp"},
		{"help fails", "echo broken >&2; exit 2", "--experimental-acp"},
	} {
		gemini := filepath.Join(dir, "gemini-"+filepath.Base(tc.want)+"-"+tc.name[:4])
		if err := os.WriteFile(gemini, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if got := geminiACPFlag(context.Background(), gemini); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
