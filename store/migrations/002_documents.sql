-- A document's live state: the plan (checkpoint and journal), Chat and
-- Decisions. Everything hangs off channels(id) with ON DELETE CASCADE.

-- The plan's last checkpoint: its full text at a version, in an epoch.
CREATE TABLE plans (
	channel_id         TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
	epoch              TEXT NOT NULL,
	version            INTEGER NOT NULL,    -- the current version: checkpoint plus journal
	checkpoint_version INTEGER NOT NULL,
	checkpoint_source  TEXT NOT NULL,
	updated_at         INTEGER NOT NULL
) STRICT;

-- Accepted updates after the checkpoint: the recovery tail, not history.
CREATE TABLE plan_journal (
	channel_id TEXT NOT NULL REFERENCES plans(channel_id) ON DELETE CASCADE,
	version    INTEGER NOT NULL,            -- the version this update produced
	client_id  TEXT NOT NULL,
	changes    TEXT NOT NULL,               -- CodeMirror ChangeSet JSON
	PRIMARY KEY (channel_id, version)
) STRICT, WITHOUT ROWID;

CREATE TABLE messages (
	id         TEXT PRIMARY KEY,
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	role       TEXT NOT NULL CHECK (role IN ('person', 'planner', 'system')),
	author     TEXT NOT NULL DEFAULT '',
	text       TEXT NOT NULL,
	status     TEXT NOT NULL DEFAULT '',
	details    TEXT,                        -- JSON
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	UNIQUE (channel_id, seq)
) STRICT;

CREATE TABLE decisions (
	id          TEXT PRIMARY KEY,
	channel_id  TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	request     TEXT NOT NULL,              -- the question call the card belongs to
	idx         INTEGER NOT NULL,           -- the question's position in its call
	call        TEXT NOT NULL,              -- the call, as asked (JSON)
	status      TEXT NOT NULL CHECK (status IN ('open', 'answered', 'cancelled', 'withdrawn')),
	answer      TEXT,                       -- the member's answer (JSON)
	answered_by TEXT NOT NULL DEFAULT '',
	block       INTEGER NOT NULL,
	created_at  INTEGER NOT NULL,
	updated_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX decisions_channel ON decisions (channel_id, created_at, idx);
