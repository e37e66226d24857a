-- A document's plan as a Markdown file: the line endings its file had when
-- it was imported (the plan itself always holds "\n"), and the last save into
-- its repository's checkout, so a file changed on disk since is never
-- overwritten without asking. Deleting a document deletes its row.

CREATE TABLE plan_files (
	channel_id   TEXT PRIMARY KEY REFERENCES channels(id) ON DELETE CASCADE,
	line_ending  TEXT NOT NULL DEFAULT 'lf' CHECK (line_ending IN ('lf', 'crlf')),
	saved_path   TEXT NOT NULL DEFAULT '',   -- relative to the checkout; '' before the first save
	saved_sha256 TEXT NOT NULL DEFAULT '',   -- hex SHA-256 of the bytes that save wrote
	saved_at     INTEGER NOT NULL DEFAULT 0  -- unix ms
) STRICT;
