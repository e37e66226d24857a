-- Renaming and removing a repository. A renamed repository keeps each of
-- its former names here, so addresses that use one (and a config file
-- that names one) still find it. A removed repository keeps its row, with
-- its documents archived, and is listed in removed_repositories, so
-- nothing is lost: adding its name again brings it back. (Written to be
-- run again harmlessly, as tests of earlier migrations do.)

CREATE TABLE IF NOT EXISTS repository_names (
	full_key   TEXT PRIMARY KEY,            -- lower(owner/name) of a former name
	node_id    TEXT NOT NULL REFERENCES repositories(node_id) ON DELETE CASCADE,
	created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX IF NOT EXISTS repository_names_node ON repository_names (node_id);

CREATE TABLE IF NOT EXISTS removed_repositories (
	node_id    TEXT PRIMARY KEY REFERENCES repositories(node_id) ON DELETE CASCADE,
	removed_at INTEGER NOT NULL             -- unix ms
) STRICT;
