-- Full-text search over the catalog and the plans (spec/channels.md's listing
-- query, and GET /api/search), in two FTS5 indexes: channel_catalog_search
-- holds each document's folded title and description exactly as
-- channels.search_text has them; channel_plan_search holds the distinct lines
-- of its plan at the last checkpoint. Apart, the catalog's index stays small and is kept
-- merged into one segment (store/search.go), while the plans' index changes
-- with every checkpoint. The trigram tokenizer makes any run of three or more
-- characters findable, which is what a substring search needs: look-alike
-- titles ("Plan 0999", "Plan 1999") differ inside a word, where a word
-- tokenizer could not tell them apart.
--
-- The FTS rows are keyed by INTEGER PRIMARY KEYs (channel_search_rows,
-- channel_plan_lines), which VACUUM (and so a backup made with VACUUM INTO)
-- keeps; channels has a TEXT primary key whose implicit rowid VACUUM may
-- renumber.
--
-- Triggers keep the catalog's index in the same transaction as every write
-- to a title or a description, whatever code makes it; deleting a document
-- (or a repository, cascading to its documents) removes its rows from both.

CREATE TABLE channel_search_rows (
	rowid      INTEGER PRIMARY KEY,
	channel_id TEXT NOT NULL UNIQUE REFERENCES channels(id) ON DELETE CASCADE
) STRICT;

CREATE VIRTUAL TABLE channel_catalog_search USING fts5(catalog, tokenize = 'trigram');
CREATE TRIGGER channel_search_insert AFTER INSERT ON channels BEGIN
	INSERT INTO channel_search_rows (channel_id) VALUES (new.id);
	INSERT INTO channel_catalog_search (rowid, catalog)
		SELECT rowid, new.search_text FROM channel_search_rows WHERE channel_id = new.id;
END;

CREATE TRIGGER channel_search_catalog AFTER UPDATE OF search_text ON channels
	WHEN new.search_text IS NOT old.search_text BEGIN
	UPDATE channel_catalog_search SET catalog = new.search_text
		WHERE rowid = (SELECT rowid FROM channel_search_rows WHERE channel_id = new.id);
END;

CREATE TRIGGER channel_search_delete AFTER DELETE ON channel_search_rows BEGIN
	DELETE FROM channel_catalog_search WHERE rowid = old.rowid;
END;

-- The plan's distinct lines at its last checkpoint, and their index (an
-- external-content FTS5 table over them). store/search.go writes the lines
-- with each checkpoint, in its transaction: only the lines that changed
-- since the last one, so a checkpoint of a long plan costs its edit, not
-- its length.
CREATE TABLE channel_plan_lines (
	rowid      INTEGER PRIMARY KEY,
	channel_id TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
	line       TEXT NOT NULL,
	UNIQUE (channel_id, line)
) STRICT;

CREATE VIRTUAL TABLE channel_plan_search USING fts5(line, content = 'channel_plan_lines', content_rowid = 'rowid',
	tokenize = 'trigram');

CREATE TRIGGER channel_plan_lines_insert AFTER INSERT ON channel_plan_lines BEGIN
	INSERT INTO channel_plan_search (rowid, line) VALUES (new.rowid, new.line);
END;

CREATE TRIGGER channel_plan_lines_delete AFTER DELETE ON channel_plan_lines BEGIN
	INSERT INTO channel_plan_search (channel_plan_search, rowid, line) VALUES ('delete', old.rowid, old.line);
END;

-- The documents that exist already.
INSERT INTO channel_search_rows (channel_id) SELECT id FROM channels ORDER BY created_at, id;
INSERT INTO channel_catalog_search (rowid, catalog)
	SELECT r.rowid, c.search_text FROM channel_search_rows r JOIN channels c ON c.id = r.channel_id;
WITH RECURSIVE split (channel_id, line, rest) AS (
	SELECT channel_id, NULL, source || char(10) FROM plan_texts
	UNION ALL
	SELECT channel_id, substr(rest, 1, instr(rest, char(10)) - 1), substr(rest, instr(rest, char(10)) + 1)
	FROM split WHERE rest != ''
)
INSERT OR IGNORE INTO channel_plan_lines (channel_id, line)
	SELECT channel_id, line FROM split WHERE trim(line) != '';
INSERT INTO channel_plan_search (channel_plan_search) VALUES ('optimize');
