-- `#` references: the documents a Chat message refers to. The message keeps
-- them in its details, as Chat shows them; these rows index them, to find
-- what a document's Chat refers to (which documents its Planner may read
-- with read_reference) and what refers to a document (its "Referenced by").
--
-- Written to run again over itself: the upgrade tests replay later
-- migrations over a database that already has them.
CREATE TABLE IF NOT EXISTS message_references (
	message_id        TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
	position          INTEGER NOT NULL,    -- the reference's place in its message
	channel_id        TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE, -- the document whose Chat holds the message
	target_id         TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE, -- the document referred to
	label             TEXT NOT NULL,       -- its title when the message was sent
	observed_revision INTEGER NOT NULL,
	observed_hash     TEXT NOT NULL,
	created_at        INTEGER NOT NULL,
	PRIMARY KEY (message_id, position)
) STRICT, WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS message_references_from ON message_references (channel_id, target_id, created_at);
CREATE INDEX IF NOT EXISTS message_references_to ON message_references (target_id, channel_id);
