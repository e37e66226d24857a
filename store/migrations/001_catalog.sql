-- Repositories and the document catalog. Every table that belongs to a
-- document hangs off channels(id) with ON DELETE CASCADE, so deleting a
-- document removes everything it owns in one statement.

CREATE TABLE repositories (
	node_id    TEXT PRIMARY KEY,            -- local:<uuid>, authoritative identity
	owner      TEXT NOT NULL,
	name       TEXT NOT NULL,
	full_key   TEXT NOT NULL UNIQUE,        -- lower(owner/name), for lookups
	path       TEXT NOT NULL DEFAULT '',    -- optional local checkout
	created_at INTEGER NOT NULL             -- unix ms
) STRICT;

CREATE TABLE channels (
	id                 TEXT PRIMARY KEY,
	repository_node_id TEXT NOT NULL REFERENCES repositories(node_id) ON DELETE CASCADE,
	title              TEXT NOT NULL,
	title_key          TEXT NOT NULL,       -- case-folded NFC title: unique per repository
	slug               TEXT NOT NULL,       -- the canonical slug
	search_text        TEXT NOT NULL,       -- case-folded title and description, for listing queries
	archived_at        INTEGER,
	created_at         INTEGER NOT NULL,
	updated_at         INTEGER NOT NULL,

	-- Generated description and its provenance (empty until generation exists).
	description                 TEXT,
	description_revision        INTEGER NOT NULL DEFAULT 0,
	description_source_revision INTEGER,
	description_source_hash     TEXT,
	description_generator       TEXT,
	description_job_id          TEXT,
	description_projected_at    INTEGER,

	parent_channel_id   TEXT REFERENCES channels(id) ON DELETE CASCADE,
	creation_source     TEXT NOT NULL CHECK (creation_source IN ('browser', 'mcp', 'research')),
	idempotency_key     TEXT,
	creation_input_hash TEXT,

	UNIQUE (repository_node_id, title_key)
) STRICT;

-- Covers the listing, search included, so a page never touches the table.
CREATE INDEX channels_recency ON channels (repository_node_id, updated_at DESC, id DESC, archived_at, search_text);
CREATE UNIQUE INDEX channels_idempotency ON channels (repository_node_id, idempotency_key)
	WHERE idempotency_key IS NOT NULL;

-- Every slug a document ever had. The canonical one is also in channels.slug;
-- the others are permanent aliases that no other document may take.
CREATE TABLE channel_slugs (
	repository_node_id TEXT NOT NULL,
	slug               TEXT NOT NULL,
	channel_id         TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	created_at         INTEGER NOT NULL,
	PRIMARY KEY (repository_node_id, slug)
) STRICT;

CREATE INDEX channel_slugs_channel ON channel_slugs (channel_id);

-- Browser sessions of the local account, by SHA-256 of the cookie value.
CREATE TABLE browser_sessions (
	token_hash TEXT PRIMARY KEY,
	created_at INTEGER NOT NULL
) STRICT;
