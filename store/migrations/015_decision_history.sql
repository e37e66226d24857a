-- Decision cards take the statuses the specification's Decisions have:
-- open, decided, reopened (a decided card opened again for a new answer),
-- discarded (a member set it aside, answered or not) and expired (closed
-- without an answer because nobody waits on it any more). The earlier
-- statuses map onto them: answered is decided, cancelled (a member
-- cancelled it) is discarded, by the member who did, and withdrawn (the
-- Planner no longer waits) is expired. previous holds the answers a card
-- had before it was reopened (JSON [{answer, answeredBy, decidedAt}],
-- oldest first). SQLite cannot change a CHECK in place, so the table is
-- made again; the copy reads only the columns of the schema before this
-- one (run again over its own table, it keeps every card, though not
-- their earlier answers nor who discarded them).
CREATE TABLE decisions_next (
	id           TEXT PRIMARY KEY,
	channel_id   TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	request      TEXT NOT NULL,
	idx          INTEGER NOT NULL,
	call         TEXT NOT NULL,
	status       TEXT NOT NULL CHECK (status IN ('open', 'decided', 'reopened', 'discarded', 'expired')),
	answer       TEXT,
	answered_by  TEXT NOT NULL DEFAULT '',
	block        INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	updated_at   INTEGER NOT NULL,
	seq          INTEGER NOT NULL DEFAULT 0,
	previous     TEXT,
	discarded_by TEXT NOT NULL DEFAULT ''
) STRICT;

INSERT INTO decisions_next (id, channel_id, request, idx, call, status, answer, answered_by, block, created_at, updated_at, seq, discarded_by)
	SELECT id, channel_id, request, idx, call,
		CASE status WHEN 'answered' THEN 'decided' WHEN 'cancelled' THEN 'discarded' WHEN 'withdrawn' THEN 'expired' ELSE status END,
		answer,
		CASE status WHEN 'cancelled' THEN '' ELSE answered_by END,
		block, created_at, updated_at, seq,
		CASE status WHEN 'cancelled' THEN answered_by ELSE '' END
	FROM decisions;

DROP TABLE decisions;
ALTER TABLE decisions_next RENAME TO decisions;
CREATE INDEX decisions_order ON decisions (channel_id, seq);
