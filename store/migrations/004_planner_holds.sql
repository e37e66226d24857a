-- What a resumable agent link kept when it dropped, or when the server
-- restarted under it (spec/agent-connection.md, "After a server restart"):
-- one row per document, written when a link drops with its work kept and for
-- every live resumable link at shutdown. body is agentconn's hold record as
-- JSON (its sessions, their waiting requests and the Decisions each asked, the
-- answers not yet acknowledged, the Stops not yet heard). handover is 1 when the
-- next process should give the client its hand-over window (a live link's
-- cut), 0 when the link had already dropped. Deleting a document deletes it.

CREATE TABLE planner_link_holds (
	channel_id TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
	login      TEXT NOT NULL,
	handover   INTEGER NOT NULL CHECK (handover IN (0, 1)),
	body       TEXT NOT NULL CHECK (json_valid(body)),
	updated_at INTEGER NOT NULL                           -- unix ms
) STRICT;
