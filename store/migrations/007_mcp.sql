-- What the local agent MCP tools keep (docs/mcp.md): the brief a
-- create_document call gave, and each update_document call's idempotency
-- key, so a retried update is answered as it was the first time, across a
-- restart too. Deleting a document deletes both.

CREATE TABLE mcp_documents (
	channel_id TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
	brief      TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE mcp_plan_updates (
	channel_id      TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	idempotency_key TEXT NOT NULL,
	input_hash      TEXT NOT NULL,     -- SHA-256 of the call's revision and plan
	revision        INTEGER NOT NULL,  -- the revision the update produced
	created_at      INTEGER NOT NULL,  -- unix ms
	PRIMARY KEY (channel_id, idempotency_key)
) STRICT, WITHOUT ROWID;

CREATE INDEX mcp_plan_updates_age ON mcp_plan_updates (channel_id, revision);
