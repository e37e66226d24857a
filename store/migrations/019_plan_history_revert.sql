-- A plan's history keeps reverts as their own kind of author ('revert': a
-- person undid one change or one Planner turn). SQLite cannot change a
-- CHECK in place, so the table is made again and its rows copied over.
-- (Written to be run again harmlessly, as tests of earlier migrations do:
-- the copy's name is cleared first, and every row is copied whatever the
-- table it copies from allows.)
DROP TABLE IF EXISTS plan_history_next;
CREATE TABLE plan_history_next (
	channel_id TEXT NOT NULL REFERENCES plans(channel_id) ON DELETE CASCADE,
	version    INTEGER NOT NULL,            -- the version this change produced
	at         INTEGER NOT NULL,            -- unix milliseconds
	kind       TEXT NOT NULL CHECK (kind IN ('person', 'planner', 'mcp', 'import', 'restore', 'revert', 'server')),
	author     TEXT NOT NULL DEFAULT '',    -- a person's login, an MCP client's name
	turn       TEXT NOT NULL DEFAULT '',    -- the Planner's turn
	model      TEXT NOT NULL DEFAULT '',    -- the Planner's model, when known
	changes    TEXT,                        -- CodeMirror ChangeSet JSON; NULL once pruned to a snapshot
	PRIMARY KEY (channel_id, version)
) STRICT, WITHOUT ROWID;
INSERT INTO plan_history_next (channel_id, version, at, kind, author, turn, model, changes)
	SELECT channel_id, version, at, kind, author, turn, model, changes FROM plan_history;
DROP TABLE plan_history;
ALTER TABLE plan_history_next RENAME TO plan_history;
