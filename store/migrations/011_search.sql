-- Full-text search over the catalog and the plans (spec/channels.md's listing
-- query, and GET /api/search), in two FTS5 indexes: channel_catalog_search
-- holds each document's folded title and description exactly as
-- channels.search_text has them; channel_plan_search holds its plan's text at
-- the last checkpoint. Apart, the catalog's index stays small and is kept
-- merged into one segment (store/search.go), while the plans' index changes
-- with every checkpoint. The trigram tokenizer makes any run of three or more
-- characters findable, which is what a substring search needs: look-alike
-- titles ("Plan 0999", "Plan 1999") differ inside a word, where a word
-- tokenizer could not tell them apart.
--
-- The FTS rows are keyed by channel_search_rows.rowid, an INTEGER PRIMARY KEY
-- that VACUUM (and so a backup made with VACUUM INTO) keeps; channels has a
-- TEXT primary key whose implicit rowid VACUUM may renumber.
--
-- Triggers keep the indexes in the same transaction as every write to a
-- title, a description or a plan checkpoint, whatever code makes it; deleting
-- a document (or a repository, cascading to its documents) removes its rows.

CREATE TABLE channel_search_rows (
	rowid      INTEGER PRIMARY KEY,
	channel_id TEXT NOT NULL UNIQUE REFERENCES channels(id) ON DELETE CASCADE
) STRICT;

CREATE VIRTUAL TABLE channel_catalog_search USING fts5(catalog, tokenize = 'trigram');
CREATE VIRTUAL TABLE channel_plan_search USING fts5(plan, tokenize = 'trigram');

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
	DELETE FROM channel_plan_search WHERE rowid = old.rowid;
END;

CREATE TRIGGER channel_search_plan_insert AFTER INSERT ON plans BEGIN
	INSERT INTO channel_plan_search (rowid, plan)
		SELECT rowid, new.checkpoint_source FROM channel_search_rows WHERE channel_id = new.channel_id;
END;

CREATE TRIGGER channel_search_plan_update AFTER UPDATE OF checkpoint_source ON plans
	WHEN new.checkpoint_source IS NOT old.checkpoint_source BEGIN
	UPDATE channel_plan_search SET plan = new.checkpoint_source
		WHERE rowid = (SELECT rowid FROM channel_search_rows WHERE channel_id = new.channel_id);
END;

CREATE TRIGGER channel_search_plan_delete AFTER DELETE ON plans BEGIN
	DELETE FROM channel_plan_search
		WHERE rowid = (SELECT rowid FROM channel_search_rows WHERE channel_id = old.channel_id);
END;

-- The documents that exist already.
INSERT INTO channel_search_rows (channel_id) SELECT id FROM channels ORDER BY created_at, id;
INSERT INTO channel_catalog_search (rowid, catalog)
	SELECT r.rowid, c.search_text FROM channel_search_rows r JOIN channels c ON c.id = r.channel_id;
INSERT INTO channel_plan_search (rowid, plan)
	SELECT r.rowid, p.checkpoint_source FROM channel_search_rows r JOIN plans p ON p.channel_id = r.channel_id;
INSERT INTO channel_plan_search (channel_plan_search) VALUES ('optimize');
