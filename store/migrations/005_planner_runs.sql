-- The run cards a document's Planner reported (spec/agent-connection.md,
-- "runs" and "Run stage deltas"), kept across reconnects and restarts until
-- Chat stops showing the card, when a later run replaces ended cards. A
-- run's card is its latest fields as JSON, without its stages; every stage
-- it reached is a row of its own, so a delta card writes only the stages it
-- names. Deleting a document deletes its runs.

CREATE TABLE planner_runs (
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	run_id     TEXT NOT NULL,
	seq        INTEGER NOT NULL,                          -- board order: first reported first
	card       TEXT NOT NULL CHECK (json_valid(card)),    -- the card without its stages
	updated_at INTEGER NOT NULL,                          -- unix ms
	PRIMARY KEY (channel_id, run_id)
) STRICT;

CREATE TABLE planner_run_stages (
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	run_id     TEXT NOT NULL,
	stage_id   TEXT NOT NULL,
	position   INTEGER NOT NULL,                          -- the stage's place in the run, from 0
	body       TEXT NOT NULL CHECK (json_valid(body)),    -- the stage as last reported
	PRIMARY KEY (channel_id, run_id, stage_id),
	FOREIGN KEY (channel_id, run_id) REFERENCES planner_runs (channel_id, run_id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;
