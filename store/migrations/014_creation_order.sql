-- Creation order: the lists the docs call "oldest first" or "newest first"
-- (a document's comment threads, its decisions, its jobs) are ordered by a
-- number the store gives each row as it is inserted, counting up within
-- its document, never by created_at (which two rows made in the same
-- millisecond share, and a clock set back reverses) nor by a random ID.
-- The rows that exist are numbered in the order those lists gave them
-- before: threads by created_at then id, decisions by created_at, request
-- then idx, jobs by created_at then rowid.

ALTER TABLE comment_threads ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE comment_threads SET seq = o.n
	FROM (SELECT id, row_number() OVER (PARTITION BY channel_id ORDER BY created_at, id) AS n FROM comment_threads) AS o
	WHERE o.id = comment_threads.id;
DROP INDEX comment_threads_channel;
CREATE INDEX comment_threads_order ON comment_threads (channel_id, seq);

ALTER TABLE decisions ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE decisions SET seq = o.n
	FROM (SELECT id, row_number() OVER (PARTITION BY channel_id ORDER BY created_at, request, idx) AS n FROM decisions) AS o
	WHERE o.id = decisions.id;
DROP INDEX decisions_channel;
CREATE INDEX decisions_order ON decisions (channel_id, seq);

ALTER TABLE jobs ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET seq = o.n
	FROM (SELECT id, row_number() OVER (PARTITION BY channel_id ORDER BY created_at, rowid) AS n FROM jobs) AS o
	WHERE o.id = jobs.id;
DROP INDEX jobs_channel;
CREATE INDEX jobs_order ON jobs (channel_id, seq);
