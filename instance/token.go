package instance

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// The local agent token is the bearer that agent clients and scripts present
// in local mode. It lives in a file of its own in the config directory,
// readable only by its owner, so that `chopin token` in another process can
// print or replace it and the running instance notices by re-reading it.

const (
	agentTokenFile   = "agent-token"
	agentTokenPrefix = "chopin_a_"
	agentTokenBytes  = 32 // 43 characters of unpadded base64url
)

// AgentTokenPath is where the agent token of configDir is kept.
func AgentTokenPath(configDir string) string {
	return filepath.Join(configDir, agentTokenFile)
}

// ValidAgentTokenShape reports whether s looks like a local agent token:
// "chopin_a_" and 43 base64url characters. It says nothing of whether s is
// the current token.
func ValidAgentTokenShape(s string) bool {
	rest, ok := strings.CutPrefix(s, agentTokenPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(agentTokenBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil && len(b) == agentTokenBytes
}

func newAgentToken() string {
	b := make([]byte, agentTokenBytes)
	rand.Read(b) // never returns an error; it crashes the program if it cannot read
	return agentTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ReadAgentToken reads the agent token of configDir. A missing file is an
// error that wraps fs.ErrNotExist. A file other people can read is refused
// rather than used: the token may already have been copied, so the fix is a
// fresh one (chopin token --rotate), not a chmod.
func ReadAgentToken(configDir string) (string, error) {
	path := AgentTokenPath(configDir)
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read the agent token: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read the agent token: %w", err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("the agent token file %s is not a regular file; remove it and run `chopin token --rotate`", path)
	}
	// Windows has no permission bits to speak of; the file inherits the
	// user profile's ACL, which other users cannot read.
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("the agent token file %s can be read by other users (mode %04o); run `chopin token --rotate` to replace it with a new private one", path, info.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return "", fmt.Errorf("read the agent token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if !ValidAgentTokenShape(token) {
		return "", fmt.Errorf("the agent token file %s does not hold a Chopin agent token; run `chopin token --rotate` to replace it", path)
	}
	return token, nil
}

// LoadOrCreateAgentToken returns the agent token of configDir, creating the
// directory and the token on first use. Two processes creating it at once
// agree on one token: the file appears whole or not at all, and only the
// first to link it in wins.
func LoadOrCreateAgentToken(configDir string) (string, error) {
	token, err := ReadAgentToken(configDir)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, err
	}
	token = newAgentToken()
	if err := writeAgentToken(configDir, token, false); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return ReadAgentToken(configDir)
		}
		return "", err
	}
	return token, nil
}

// RotateAgentToken replaces the agent token of configDir with a new one and
// returns it. A running Chopin notices the new file and closes the agent
// links attached with the old token.
func RotateAgentToken(configDir string) (string, error) {
	token := newAgentToken()
	if err := writeAgentToken(configDir, token, true); err != nil {
		return "", err
	}
	return token, nil
}

// writeAgentToken writes token to a private temporary file, flushes it, and
// moves it into place: replacing any existing file when replace is set, and
// otherwise failing with fs.ErrExist if one appeared meanwhile. A reader
// therefore never sees a half-written token.
func writeAgentToken(configDir, token string, replace bool) error {
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		return fmt.Errorf("create the config directory: %w", err)
	}
	tmp, err := os.CreateTemp(configDir, ".agent-token-*")
	if err != nil {
		return fmt.Errorf("write the agent token: %w", err)
	}
	defer os.Remove(tmp.Name()) // harmless once renamed; cleans up otherwise
	// CreateTemp makes the file 0600 already; say so for the reader, and in
	// case a umask or platform thought otherwise.
	err = tmp.Chmod(0o600)
	if err == nil || runtime.GOOS == "windows" {
		_, err = tmp.WriteString(token + "\n")
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write the agent token: %w", err)
	}
	path := AgentTokenPath(configDir)
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else if err = os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		// A file system without hard links: fall back to a check and a
		// rename, which loses only the race between two first starts.
		if _, serr := os.Lstat(path); serr == nil {
			err = fs.ErrExist
		} else {
			err = os.Rename(tmp.Name(), path)
		}
	}
	if err != nil {
		return fmt.Errorf("write the agent token: %w", err)
	}
	syncDir(configDir)
	return nil
}

// syncDir makes a rename in dir durable. It is best effort: not every
// platform can open a directory for syncing.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
