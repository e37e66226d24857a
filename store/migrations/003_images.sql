-- A document's own images: the pictures a tool made and upload_plan_image
-- stored, served from /images/<sha256>.<ext> to the document's readers.
-- The key is the document and the SHA-256 of the stored bytes, so the same
-- bytes stored twice are one row; another document holding the same bytes
-- has a row of its own, and deleting a document deletes its images.

CREATE TABLE images (
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	sha256     TEXT NOT NULL CHECK (length(sha256) = 64),  -- lowercase hex of data
	ext        TEXT NOT NULL CHECK (ext IN ('png', 'jpg', 'webp', 'gif', 'avif', 'bmp', 'ico')),
	mime_type  TEXT NOT NULL CHECK (mime_type IN ('image/png', 'image/jpeg', 'image/webp', 'image/gif',
	                                              'image/avif', 'image/bmp', 'image/x-icon')),
	width      INTEGER NOT NULL CHECK (width > 0),
	height     INTEGER NOT NULL CHECK (height > 0),
	size       INTEGER NOT NULL,                          -- length(data) in bytes
	data       BLOB NOT NULL,
	created_at INTEGER NOT NULL,                          -- unix ms
	PRIMARY KEY (channel_id, sha256)
) STRICT; -- a rowid table: WITHOUT ROWID suits small rows, not blobs

-- Serving finds an image by its hash alone, then checks who may read it.
CREATE INDEX images_sha256 ON images (sha256);
