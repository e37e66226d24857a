//go:build !unix && !windows

package instance

import (
	"errors"
	"os"
)

// lockFile has no implementation where Chopin is not built for (Plan 9,
// WebAssembly); the package still compiles there.
func lockFile(path string) (*os.File, error) {
	return nil, errors.ErrUnsupported
}
