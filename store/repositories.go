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
// that is already registered (in any letter case) is a conflict. The name
// of a removed repository brings that repository back, its documents
// still archived; a former name of a renamed one is taken over, and its
// old addresses lead here from then on.
func (s *Store) AddRepository(ctx context.Context, fullName, path string) (Repository, error) {
	owner, name, err := ident.ParseRepository(fullName)
	if err != nil {
		return Repository{}, err
	}
	r := Repository{NodeID: "local:" + uuid.NewString(), Owner: owner, Name: name, Path: path, CreatedAt: s.nowMS()}
	err = s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		old, removed, err := repositoryRow(ctx, tx, fullKey(owner, name))
		switch {
		case err == nil && !removed:
			return conflict("repository-exists", "%s is already registered", r.FullName())
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return err
		}
		if err := checkPathFree(ctx, tx, path, old.NodeID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM repository_names WHERE full_key = ?`, fullKey(owner, name)); err != nil {
			return err
		}
		if removed {
			r.NodeID, r.CreatedAt = old.NodeID, old.CreatedAt
			if _, err := tx.ExecContext(ctx, `DELETE FROM removed_repositories WHERE node_id = ?`, r.NodeID); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `UPDATE repositories SET owner = ?, name = ?, path = ? WHERE node_id = ?`,
				owner, name, path, r.NodeID)
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO repositories (node_id, owner, name, full_key, path, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, r.NodeID, owner, name, fullKey(owner, name), path, r.CreatedAt)
		return err
	})
	return r, err
}

// RenameRepository gives a repository a new owner/name. Its documents, and
// their ids, stay; its former name keeps leading to it (RepositoryByName).
// A name another repository has, had, or a removed one keeps, is a
// conflict; a change of letter case only is a rename too.
func (s *Store) RenameRepository(ctx context.Context, owner, name, newName string) (Repository, error) {
	newOwner, newRepo, err := ident.ParseRepository(newName)
	if err != nil {
		return Repository{}, err
	}
	newKey := fullKey(newOwner, newRepo)
	var r Repository
	err = s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if r, err = repositoryByName(ctx, tx, owner, name); err != nil {
			return err
		}
		oldKey := fullKey(r.Owner, r.Name)
		if newKey != oldKey {
			if err := checkNameFree(ctx, tx, newKey, newOwner+"/"+newRepo, r.NodeID); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM repository_names WHERE full_key = ?`, newKey); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO repository_names (full_key, node_id, created_at) VALUES (?, ?, ?)`,
				oldKey, r.NodeID, s.nowMS()); err != nil {
				return err
			}
		}
		r.Owner, r.Name = newOwner, newRepo
		_, err := tx.ExecContext(ctx, `UPDATE repositories SET owner = ?, name = ?, full_key = ? WHERE node_id = ?`,
			newOwner, newRepo, newKey, r.NodeID)
		return err
	})
	return r, err
}

// checkNameFree refuses a new name for repository nodeID that another
// repository has, keeps while removed, or had before a rename.
func checkNameFree(ctx context.Context, tx *sql.Tx, key, shown, nodeID string) error {
	other, removed, err := repositoryRow(ctx, tx, key)
	switch {
	case err == nil && removed:
		return conflict("repository-exists", "repository %s was removed, and keeps that name for its archived documents; add it again to get them back, or pick another name", other.FullName())
	case err == nil:
		return conflict("repository-exists", "repository %s is already registered; pick another name", other.FullName())
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	var holder string
	err = tx.QueryRowContext(ctx, `SELECT r.owner || '/' || r.name FROM repository_names n
		JOIN repositories r ON r.node_id = n.node_id WHERE n.full_key = ? AND n.node_id != ?`, key, nodeID).Scan(&holder)
	switch {
	case err == nil:
		return conflict("repository-exists", "the name %s was %s's before a rename, and its old addresses still lead there; pick another name", shown, holder)
	case errors.Is(err, sql.ErrNoRows):
		return nil
	}
	return err
}

// RemoveRepository takes a repository off the list. Its documents are
// never deleted: with active documents it is refused (conflict
// repository-has-documents) unless archive is set, which archives them
// first. A removed repository keeps its row, its name and its archived
// documents (adding the name again brings them back); its checkout path
// is let go. It returns the documents it archived.
func (s *Store) RemoveRepository(ctx context.Context, owner, name string, archive bool) (Repository, []Channel, error) {
	var r Repository
	var archived []Channel
	err := s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if r, err = repositoryByName(ctx, tx, owner, name); err != nil {
			return err
		}
		ids, err := activeChannelIDs(ctx, tx, r.NodeID)
		if err != nil {
			return err
		}
		if len(ids) > 0 && !archive {
			docs := "documents"
			if len(ids) == 1 {
				docs = "document"
			}
			return conflict("repository-has-documents", "repository %s has %d active %s; archive them first, or remove it archiving them",
				r.FullName(), len(ids), docs)
		}
		now := s.nowMS()
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `UPDATE channels SET archived_at = ?, updated_at = ? WHERE id = ?`, now, now, id); err != nil {
				return fmt.Errorf("archive channel: %w", err)
			}
			c, err := channelByID(ctx, tx, id)
			if err != nil {
				return err
			}
			archived = append(archived, c)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO removed_repositories (node_id, removed_at) VALUES (?, ?)`, r.NodeID, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE repositories SET path = '' WHERE node_id = ?`, r.NodeID)
		return err
	})
	return r, archived, err
}

// RepositoryChannelIDs lists the ids of every document of a repository,
// archived ones too.
func (s *Store) RepositoryChannelIDs(ctx context.Context, nodeID string) ([]string, error) {
	return channelIDs(ctx, s.read, `SELECT id FROM channels WHERE repository_node_id = ? ORDER BY id`, nodeID)
}

func activeChannelIDs(ctx context.Context, tx *sql.Tx, nodeID string) ([]string, error) {
	return channelIDs(ctx, tx, `SELECT id FROM channels WHERE repository_node_id = ? AND archived_at IS NULL ORDER BY id`, nodeID)
}

func channelIDs(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query, nodeID string) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, nodeID)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// EnsureRepository registers owner/name unless it is already there, and sets
// its checkout path. The config file's repositories go through here at start:
// a former name sets the path of the repository renamed from it, and the
// name of a removed repository is left removed (ErrRemoved).
func (s *Store) EnsureRepository(ctx context.Context, fullName, path string) (Repository, error) {
	owner, name, err := ident.ParseRepository(fullName)
	if err != nil {
		return Repository{}, err
	}
	var r Repository
	err = s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		r, err = repositoryByName(ctx, tx, owner, name)
		if errors.Is(err, ErrRemoved) {
			return err
		}
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

// Repositories lists every registered repository by name (not the removed).
func (s *Store) Repositories(ctx context.Context) ([]Repository, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+repositoryColumns+` FROM repositories
		WHERE node_id NOT IN (SELECT node_id FROM removed_repositories) ORDER BY full_key`)
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
// letter case, or by a name it had before a rename. A removed repository
// is not found (ErrRemoved, which is an ErrNotFound).
func (s *Store) RepositoryByName(ctx context.Context, owner, name string) (Repository, error) {
	return repositoryByName(ctx, s.read, owner, name)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const repositoryColumns = `node_id, owner, name, path, created_at`

// ErrRemoved is the error of a lookup by the name of a removed repository.
var ErrRemoved = errors.New("repository removed")

func repositoryByName(ctx context.Context, q querier, owner, name string) (Repository, error) {
	key := fullKey(owner, name)
	r, removed, err := repositoryRow(ctx, q, key)
	if errors.Is(err, sql.ErrNoRows) {
		var removedAt sql.NullInt64
		err = q.QueryRowContext(ctx, `SELECT `+prefixed("r.", repositoryColumns)+`, x.removed_at
			FROM repository_names n JOIN repositories r ON r.node_id = n.node_id
			LEFT JOIN removed_repositories x ON x.node_id = r.node_id WHERE n.full_key = ?`, key).
			Scan(&r.NodeID, &r.Owner, &r.Name, &r.Path, &r.CreatedAt, &removedAt)
		removed = removedAt.Valid
	}
	if err == nil && removed {
		return Repository{}, fmt.Errorf("%w: %w", notFound("repository-removed",
			"repository %s was removed; add it again to get back its archived documents", r.FullName()), ErrRemoved)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Repository{}, notFound("repository-not-found", "repository %s/%s is not registered", owner, name)
	}
	return r, err
}

// repositoryRow is the repository whose current name is key, removed or not.
func repositoryRow(ctx context.Context, q querier, key string) (r Repository, removed bool, err error) {
	var removedAt sql.NullInt64
	row := q.QueryRowContext(ctx, `SELECT `+prefixed("r.", repositoryColumns)+`, x.removed_at FROM repositories r
		LEFT JOIN removed_repositories x ON x.node_id = r.node_id WHERE r.full_key = ?`, key)
	err = row.Scan(&r.NodeID, &r.Owner, &r.Name, &r.Path, &r.CreatedAt, &removedAt)
	return r, removedAt.Valid, err
}

// prefixed is a column list with each column qualified by prefix.
func prefixed(prefix, columns string) string {
	return prefix + strings.ReplaceAll(columns, ", ", ", "+prefix)
}

func scanRepository(row interface{ Scan(...any) error }) (Repository, error) {
	var r Repository
	err := row.Scan(&r.NodeID, &r.Owner, &r.Name, &r.Path, &r.CreatedAt)
	return r, err
}

func fullKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }
