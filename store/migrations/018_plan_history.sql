-- A plan's history: every accepted change with its author and time, kept in
-- detail for a recent window and as snapshots beyond it (store/history.go).
-- The journal (plan_journal) stays what it was, the recovery tail.
-- (Written to be run again harmlessly, as tests of earlier migrations do.)
CREATE TABLE IF NOT EXISTS plan_history (
	channel_id TEXT NOT NULL REFERENCES plans(channel_id) ON DELETE CASCADE,
	version    INTEGER NOT NULL,            -- the version this change produced
	at         INTEGER NOT NULL,            -- unix milliseconds
	kind       TEXT NOT NULL CHECK (kind IN ('person', 'planner', 'mcp', 'import', 'restore', 'server')),
	author     TEXT NOT NULL DEFAULT '',    -- a person's login, an MCP client's name
	turn       TEXT NOT NULL DEFAULT '',    -- the Planner's turn
	model      TEXT NOT NULL DEFAULT '',    -- the Planner's model, when known
	changes    TEXT,                        -- CodeMirror ChangeSet JSON; NULL once pruned to a snapshot
	PRIMARY KEY (channel_id, version)
) STRICT, WITHOUT ROWID;

-- The plan's full text at some versions: the base every version after it
-- is rebuilt from.
CREATE TABLE IF NOT EXISTS plan_snapshots (
	channel_id TEXT NOT NULL REFERENCES plans(channel_id) ON DELETE CASCADE,
	version    INTEGER NOT NULL,
	source     TEXT NOT NULL,
	PRIMARY KEY (channel_id, version)
) STRICT;

-- What existing plans already hold: the checkpoint, and the journal after it.
INSERT INTO plan_snapshots (channel_id, version, source)
	SELECT channel_id, checkpoint_version, source FROM plans JOIN plan_texts USING (channel_id) WHERE true
	ON CONFLICT DO NOTHING;
INSERT INTO plan_history (channel_id, version, at, kind, changes)
	SELECT j.channel_id, j.version, p.updated_at,
		CASE j.client_id WHEN 'server' THEN 'server' WHEN 'planner' THEN 'planner' ELSE 'person' END, j.changes
	FROM plan_journal j JOIN plans p USING (channel_id) WHERE j.version > p.checkpoint_version
	ON CONFLICT DO NOTHING;
INSERT INTO plan_history (channel_id, version, at, kind)
	SELECT channel_id, checkpoint_version, updated_at, 'server' FROM plans WHERE true
	ON CONFLICT DO NOTHING;
