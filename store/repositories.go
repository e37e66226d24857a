package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/chopin-desktop/chopin/ident"
)

// Repository is a registered owner/name with an optional local checkout. Its
// NodeID, "local:" plus a random UUID given once, is the identity documents
// hang off; owner and name may change without orphaning them.
type Repository struct {
	NodeID    string `json:"nodeId"`
	Owner     string `json:"owner"`
	Name      string `json:"name"`
	Path      string `json:"path,omitempty"`
	CreatedAt int64  `json:"-"`
}

// FullName is owner/name.
func (r Repository) FullName() string { return r.Owner + "/" + r.Name }

// AddRepository registers owner/name with an optional checkout path. A name
// that is already registered (in any letter case) is a conflict.
func (s *Store) AddRepository(ctx context.Context, fullName, path string) (Repository, error) {
	owner, name, err := ident.ParseRepository(fullName)
	if err != nil {
		return Repository{}, err
	}
	r := Repository{NodeID: "local:" + uuid.NewString(), Owner: owner, Name: name, Path: path, CreatedAt: s.nowMS()}
	err = s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := repositoryByName(ctx, tx, owner, name); err == nil {
			return conflict("repository-exists", "%s is already registered", r.FullName())
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := checkPathFree(ctx, tx, path, ""); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO repositories (node_id, owner, name, full_key, path, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, r.NodeID, owner, name, fullKey(owner, name), path, r.CreatedAt)
		return err
	})
	return r, err
}

// EnsureRepository registers owner/name unless it is already there, and sets
// its checkout path. The config file's repositories go through here at start.
func (s *Store) EnsureRepository(ctx context.Context, fullName, path string) (Repository, error) {
	owner, name, err := ident.ParseRepository(fullName)
	if err != nil {
		return Repository{}, err
	}
	var r Repository
	err = s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		r, err = repositoryByName(ctx, tx, owner, name)
		if err == nil || errors.Is(err, ErrNotFound) {
			if err := checkPathFree(ctx, tx, path, r.NodeID); err != nil {
				return err
			}
		}
		if errors.Is(err, ErrNotFound) {
			r = Repository{NodeID: "local:" + uuid.NewString(), Owner: owner, Name: name, Path: path, CreatedAt: s.nowMS()}
			_, err = tx.ExecContext(ctx, `INSERT INTO repositories (node_id, owner, name, full_key, path, created_at)
				VALUES (?, ?, ?, ?, ?, ?)`, r.NodeID, owner, name, fullKey(owner, name), path, r.CreatedAt)
			return err
		}
		if err != nil || r.Path == path {
			return err
		}
		r.Path = path
		_, err = tx.ExecContext(ctx, `UPDATE repositories SET path = ? WHERE node_id = ?`, path, r.NodeID)
		return err
	})
	return r, err
}

// SetRepositoryPath sets, or with "" clears, the local checkout of a
// registered repository. A path another repository has is a conflict.
func (s *Store) SetRepositoryPath(ctx context.Context, owner, name, path string) (Repository, error) {
	var r Repository
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if r, err = repositoryByName(ctx, tx, owner, name); err != nil {
			return err
		}
		if err := checkPathFree(ctx, tx, path, r.NodeID); err != nil {
			return err
		}
		r.Path = path
		_, err = tx.ExecContext(ctx, `UPDATE repositories SET path = ? WHERE node_id = ?`, path, r.NodeID)
		return err
	})
	return r, err
}

// checkPathFree refuses a checkout path that a repository other than
// nodeID already has: one checkout is one repository's.
func checkPathFree(ctx context.Context, tx *sql.Tx, path, nodeID string) error {
	if path == "" {
		return nil
	}
	var owner, name string
	err := tx.QueryRowContext(ctx, `SELECT owner, name FROM repositories WHERE path = ? AND node_id != ?`, path, nodeID).Scan(&owner, &name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return conflict("checkout-taken", "%s is already the checkout of %s/%s; a checkout belongs to one repository", path, owner, name)
}

// Repositories lists every registered repository by name.
func (s *Store) Repositories(ctx context.Context) ([]Repository, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+repositoryColumns+` FROM repositories ORDER BY full_key`)
	if err != nil {
		return nil, fmt.Errorf("list repositories: %w", err)
	}
	defer rows.Close()
	repos := []Repository{}
	for rows.Next() {
		r, err := scanRepository(rows)
		if err != nil {
			return nil, err
		}
		repos = append(repos, r)
	}
	return repos, rows.Err()
}

// RepositoryByName finds a registered repository by owner and name, in any
// letter case.
func (s *Store) RepositoryByName(ctx context.Context, owner, name string) (Repository, error) {
	return repositoryByName(ctx, s.read, owner, name)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const repositoryColumns = `node_id, owner, name, path, created_at`

func repositoryByName(ctx context.Context, q querier, owner, name string) (Repository, error) {
	r, err := scanRepository(q.QueryRowContext(ctx,
		`SELECT `+repositoryColumns+` FROM repositories WHERE full_key = ?`, fullKey(owner, name)))
	if errors.Is(err, sql.ErrNoRows) {
		return Repository{}, notFound("repository-not-found", "repository %s/%s is not registered", owner, name)
	}
	return r, err
}

func scanRepository(row interface{ Scan(...any) error }) (Repository, error) {
	var r Repository
	err := row.Scan(&r.NodeID, &r.Owner, &r.Name, &r.Path, &r.CreatedAt)
	return r, err
}

func fullKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }
