package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// Image is one of a document's own images: the bytes as stored (already
// checked and, when they were too large, made smaller by the caller) and
// what they are. It is addressed by the SHA-256 of those bytes.
type Image struct {
	SHA256    string // lowercase hex SHA-256 of Data
	Ext       string // png, jpg, webp, gif, avif, bmp or ico
	MimeType  string // the type the bytes are, such as image/png
	Width     int
	Height    int
	Data      []byte
	CreatedAt int64 // unix ms, set by the store when the image is first saved
}

// SaveImage keeps img as one of the document's images. It is idempotent:
// the same bytes saved again leave the one row as it was (its first
// created_at included). img.SHA256 must be the hash of img.Data, so a caller
// cannot file bytes under another image's address.
func (s *Store) SaveImage(ctx context.Context, channelID string, img Image) error {
	sum := sha256.Sum256(img.Data)
	if img.SHA256 != hex.EncodeToString(sum[:]) {
		return invalid("image-hash-mismatch", "the image's SHA-256 %q is not the hash of its bytes", img.SHA256)
	}
	return s.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO images (channel_id, sha256, ext, mime_type, width, height, size, data, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (channel_id, sha256) DO NOTHING`,
			channelID, img.SHA256, img.Ext, img.MimeType, img.Width, img.Height, len(img.Data), img.Data, s.nowMS())
		if isForeignKeyError(err) {
			return notFound("channel-not-found", "no document has the ID %s", channelID)
		}
		if err != nil {
			return fmt.Errorf("save image: %w", err)
		}
		return nil
	})
}

// Image reads one of a document's images by the SHA-256 of its bytes.
func (s *Store) Image(ctx context.Context, channelID, sha string) (Image, error) {
	img, err := scanImage(s.read.QueryRowContext(ctx, `SELECT sha256, ext, mime_type, width, height, data, created_at
		FROM images WHERE channel_id = ? AND sha256 = ?`, channelID, sha))
	if errors.Is(err, sql.ErrNoRows) {
		return Image{}, notFound("image-not-found", "the document has no image %s", sha)
	}
	if err != nil {
		return Image{}, fmt.Errorf("read image: %w", err)
	}
	return img, nil
}

// ImageByHash reads an image by its hash alone, for serving
// /images/<sha256>.<ext>, with the IDs of every document that holds it
// (oldest first), so the caller can decide whether the reader may see it.
// An image no document holds is not found.
func (s *Store) ImageByHash(ctx context.Context, sha string) (Image, []string, error) {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Image{}, nil, fmt.Errorf("read image: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT channel_id FROM images WHERE sha256 = ? ORDER BY created_at, channel_id`, sha)
	if err != nil {
		return Image{}, nil, fmt.Errorf("read image holders: %w", err)
	}
	var holders []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return Image{}, nil, fmt.Errorf("read image holders: %w", err)
		}
		holders = append(holders, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Image{}, nil, fmt.Errorf("read image holders: %w", err)
	}
	if len(holders) == 0 {
		return Image{}, nil, notFound("image-not-found", "no document has the image %s", sha)
	}
	// Every holder's row has the same bytes: they are addressed by their hash.
	img, err := scanImage(tx.QueryRowContext(ctx, `SELECT sha256, ext, mime_type, width, height, data, created_at
		FROM images WHERE channel_id = ? AND sha256 = ?`, holders[0], sha))
	if err != nil {
		return Image{}, nil, fmt.Errorf("read image: %w", err)
	}
	return img, holders, nil
}

func scanImage(row *sql.Row) (Image, error) {
	var img Image
	err := row.Scan(&img.SHA256, &img.Ext, &img.MimeType, &img.Width, &img.Height, &img.Data, &img.CreatedAt)
	return img, err
}
