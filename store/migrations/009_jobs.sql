-- Durable background jobs (DESIGN.md section 11) and their one artifact
-- each. A job belongs to a document and goes with it. The source a job
-- reads is never stored here: only its revision and hash, in input.

CREATE TABLE jobs (
	id              TEXT PRIMARY KEY,
	type            TEXT NOT NULL,              -- type@version
	channel_id      TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	idempotency_key TEXT NOT NULL,
	input           TEXT NOT NULL,              -- JSON
	state           TEXT NOT NULL CHECK (state IN ('pending', 'paused', 'running', 'completed', 'failed', 'cancelled', 'superseded')),
	reason          TEXT NOT NULL DEFAULT '',
	attempts        INTEGER NOT NULL DEFAULT 0,
	failures        INTEGER NOT NULL DEFAULT 0,
	max_attempts    INTEGER NOT NULL,
	not_before      INTEGER NOT NULL,           -- unix ms
	created_at      INTEGER NOT NULL,
	updated_at      INTEGER NOT NULL,
	UNIQUE (channel_id, idempotency_key)
) STRICT;

CREATE INDEX jobs_open ON jobs (state, not_before) WHERE state IN ('pending', 'paused', 'running');
CREATE INDEX jobs_channel ON jobs (channel_id, created_at DESC);

CREATE TABLE job_artifacts (
	job_id     TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
	output     TEXT NOT NULL,                   -- JSON
	created_at INTEGER NOT NULL
) STRICT;
