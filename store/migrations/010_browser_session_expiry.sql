-- Browser sessions expire after 30 days unused and can all be signed out at
-- once: each remembers when it was last used (a session from before this
-- counts as used when it was made).
ALTER TABLE browser_sessions ADD COLUMN last_used_at INTEGER NOT NULL DEFAULT 0;
UPDATE browser_sessions SET last_used_at = created_at;
CREATE INDEX browser_sessions_last_used ON browser_sessions (last_used_at);
