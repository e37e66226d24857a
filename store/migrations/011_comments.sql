-- Comment threads on passages of a plan (room/comments.go): the passage's
-- anchor (its offsets at anchor_version, in UTF-16 code units, the blocks it
-- lies in and its quote), the thread's state and, once accepted, its result;
-- and the notes, oldest first. Deleting the document deletes them.
CREATE TABLE comment_threads (
	id             TEXT PRIMARY KEY,
	channel_id     TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	status         TEXT NOT NULL CHECK (status IN ('open', 'accepted', 'dismissed')),
	blocks         TEXT NOT NULL,              -- JSON [{index, digest}], as checked at creation
	anchor_from    INTEGER NOT NULL,
	anchor_to      INTEGER NOT NULL,
	anchor_version INTEGER NOT NULL,           -- the plan version the offsets refer to
	anchor_state   TEXT NOT NULL CHECK (anchor_state IN ('anchored', 'changed', 'orphaned')),
	quote          TEXT NOT NULL,
	created_by     TEXT NOT NULL,
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL,
	decided_by     TEXT NOT NULL DEFAULT '',
	decided_at     INTEGER NOT NULL DEFAULT 0,
	result         TEXT                        -- JSON, once accepted
) STRICT;

CREATE INDEX comment_threads_channel ON comment_threads (channel_id, created_at);

CREATE TABLE comment_notes (
	id         TEXT PRIMARY KEY,
	thread_id  TEXT NOT NULL REFERENCES comment_threads(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	author     TEXT NOT NULL,
	text       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	UNIQUE (thread_id, seq)
) STRICT;
