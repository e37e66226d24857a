-- What a document remembers of its Planner across restarts: the model and
-- thinking level a person chose (spec/agent-connection.md, "Capability
-- catalog": chat:model includes the saved model name), and which Planner
-- reply answers which person's message, so Retry finds the failed attempt
-- without guessing from the transcript. Deleting a document deletes both.

CREATE TABLE planner_model_choices (
	channel_id     TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
	model          TEXT NOT NULL DEFAULT '',   -- the catalog id; '' for the client's default
	thinking_level TEXT NOT NULL DEFAULT '',   -- '' for the model's default
	model_name     TEXT NOT NULL DEFAULT '',   -- the catalog's name when chosen
	fell_back      INTEGER NOT NULL DEFAULT 0, -- 1 once Chat recorded a turn falling back from it
	updated_at     INTEGER NOT NULL            -- unix ms
) STRICT;

CREATE TABLE planner_replies (
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	message_id TEXT NOT NULL,                  -- the person's message
	reply_id   TEXT NOT NULL,                  -- the latest Planner reply that answered it
	PRIMARY KEY (channel_id, message_id)
) STRICT, WITHOUT ROWID;
