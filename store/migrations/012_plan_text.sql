-- A plan's checkpoint text gets a row of its own. Every accepted push
-- advances plans.version, and SQLite rewrites a whole row to update one
-- column: with the text in the same row, a keystroke in a 250 KB plan
-- rewrote its 250 KB of overflow pages. Now a push writes only small rows
-- (the version and a journal entry); the text is written at a checkpoint.
CREATE TABLE plan_texts (
	channel_id TEXT PRIMARY KEY REFERENCES plans(channel_id) ON DELETE CASCADE,
	source     TEXT NOT NULL
) STRICT;

INSERT INTO plan_texts (channel_id, source) SELECT channel_id, checkpoint_source FROM plans;
ALTER TABLE plans DROP COLUMN checkpoint_source;
