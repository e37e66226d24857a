package instance

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestTokenShape(t *testing.T) {
	tests := map[string]bool{
		"chopin_a_" + strings.Repeat("A", 43):         true,
		"chopin_a_" + strings.Repeat("A", 42) + "B":   false, // sets bits past the 32 bytes
		"chopin_a_" + strings.Repeat("A", 42) + "E":   true,
		"chopin_a_" + strings.Repeat("-", 42) + "8":   true,
		"chopin_a_" + strings.Repeat("A", 42):         false,
		"chopin_a_" + strings.Repeat("A", 44):         false,
		"chopin_a_" + strings.Repeat("A", 42) + "=":   false,
		"chopin_a_" + strings.Repeat("+", 42) + "8":   false,
		"chopin_b_" + strings.Repeat("A", 42) + "E":   false,
		strings.Repeat("A", 52):                       false,
		"":                                            false,
		"chopin_a_" + strings.Repeat("A", 42) + "E\n": false,
		" chopin_a_" + strings.Repeat("A", 42) + "E":  false,
	}
	for s, want := range tests {
		if got := ValidAgentTokenShape(s); got != want {
			t.Errorf("ValidAgentTokenShape(%q) = %v, want %v", s, got, want)
		}
	}
	for range 100 {
		if tok := newAgentToken(); !ValidAgentTokenShape(tok) || len(tok) != 52 {
			t.Fatalf("newAgentToken() = %q, not a valid token", tok)
		}
	}
}

func TestTokenCreatedOnceWithMode0600(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config", "chopin")
	tok, err := LoadOrCreateAgentToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ValidAgentTokenShape(tok) {
		t.Fatalf("token %q has the wrong shape", tok)
	}
	b, err := os.ReadFile(filepath.Join(dir, "agent-token"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != tok+"\n" {
		t.Errorf("file holds %q, want %q", b, tok+"\n")
	}
	if runtime.GOOS != "windows" {
		for path, want := range map[string]os.FileMode{filepath.Join(dir, "agent-token"): 0o600, dir: 0o700} {
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("%s has mode %04o, want %04o", path, got, want)
			}
		}
	}
	again, err := LoadOrCreateAgentToken(dir)
	if err != nil || again != tok {
		t.Errorf("second LoadOrCreateAgentToken = %q, %v; want the same %q", again, err, tok)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("config directory holds %d entries, want only agent-token", len(entries))
	}
}

func TestTokenConcurrentCreationAgrees(t *testing.T) {
	dir := t.TempDir()
	tokens := make([]string, 8)
	var wg sync.WaitGroup
	for i := range tokens {
		wg.Go(func() {
			tok, err := LoadOrCreateAgentToken(dir)
			if err != nil {
				t.Error(err)
			}
			tokens[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range tokens[1:] {
		if tok != tokens[0] {
			t.Fatalf("concurrent first starts disagree: %q", tokens)
		}
	}
}

func TestTokenRotate(t *testing.T) {
	dir := t.TempDir()
	old, err := LoadOrCreateAgentToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := RotateAgentToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rotated == old || !ValidAgentTokenShape(rotated) {
		t.Errorf("RotateAgentToken = %q, want a new valid token (old %q)", rotated, old)
	}
	if now, err := ReadAgentToken(dir); err != nil || now != rotated {
		t.Errorf("ReadAgentToken after rotation = %q, %v; want %q", now, err, rotated)
	}
	if info, _ := os.Stat(AgentTokenPath(dir)); runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
		t.Errorf("rotated file has mode %04o, want 0600", info.Mode().Perm())
	}
}

func TestTokenRefusesAFileOthersCanRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no permission bits on Windows")
	}
	dir := t.TempDir()
	if _, err := LoadOrCreateAgentToken(dir); err != nil {
		t.Fatal(err)
	}
	path := AgentTokenPath(dir)
	os.Chmod(path, 0o644)
	_, err := LoadOrCreateAgentToken(dir)
	want := "the agent token file " + path + " can be read by other users (mode 0644); run `chopin token --rotate` to replace it with a new private one"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	// The advice works.
	tok, err := RotateAgentToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ReadAgentToken(dir); err != nil || got != tok {
		t.Errorf("after rotation: %q, %v", got, err)
	}
}

func TestTokenRefusesAFileWithoutAToken(t *testing.T) {
	dir := t.TempDir()
	path := AgentTokenPath(dir)
	os.WriteFile(path, []byte("hunter2\n"), 0o600)
	_, err := LoadOrCreateAgentToken(dir)
	want := "the agent token file " + path + " does not hold a Chopin agent token; run `chopin token --rotate` to replace it"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
