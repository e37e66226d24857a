package store

// Search over the catalog and the plans, through the FTS5 indexes of
// migration 013_search.sql: the listing's query (spec/channels.md,
// docs/http-api.md) finds its candidates there instead of scanning the
// repository's documents, and Search answers GET /api/search with the
// matching line of a title, a description or a plan.

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// minIndexedQuery is the shortest query, in characters, the trigram index
// can answer; a shorter one is answered by reading the catalog.
const minIndexedQuery = 3

// indexedCandidates bounds the documents the index may propose for a
// listing query before the listing prefers to read the repository in
// recency order instead: a query that most documents match finds its page
// sooner that way than by sorting every match.
var indexedCandidates = 1000 // a variable for the tests, which compare both ways

// ftsPhrase quotes s as one FTS5 phrase: with the trigram tokenizer, a
// phrase matches where its text occurs as a substring.
func ftsPhrase(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// indexCandidates returns, as a JSON array of channel_search_rows rowids,
// the documents the index proposes for a folded listing query, or "" when
// the listing should read the repository in recency order instead: the
// query is too short for trigrams, or the index proposes too many
// documents across the catalog.
func (s *Store) indexCandidates(ctx context.Context, query string) (string, error) {
	if utf8.RuneCountInString(query) < minIndexedQuery {
		return "", nil
	}
	var n int
	var rowids string
	err := s.read.QueryRowContext(ctx, `SELECT count(*), coalesce(json_group_array(rowid), '[]') FROM (
		SELECT rowid FROM channel_catalog_search WHERE channel_catalog_search MATCH ? LIMIT ?)`,
		ftsPhrase(query), indexedCandidates).Scan(&n, &rowids)
	if err != nil {
		return "", fmt.Errorf("search index: %w", err)
	}
	if n >= indexedCandidates {
		return "", nil
	}
	return rowids, nil
}

// listPageFromIndex is the listing's page query over the candidates the
// index proposed. instr on search_text keeps the catalog's exact semantics
// (the index may propose more: its tokenizer folds letter case again).
const listPageFromIndex = `SELECT c.id FROM json_each(?) j
	CROSS JOIN channel_search_rows sr ON sr.rowid = j.value
	CROSS JOIN channels c ON c.id = sr.channel_id
	WHERE c.repository_node_id = ?
	  AND (? OR c.archived_at IS NULL)
	  AND instr(c.search_text, ?) > 0
	  AND (c.updated_at, c.id) < (?, ?)
	ORDER BY c.updated_at DESC, c.id DESC
	LIMIT ?`

// listPageByRecency is the listing's page query that reads the repository's
// documents in recency order (covered by channels_recency).
const listPageByRecency = `SELECT id FROM channels
	WHERE repository_node_id = ?
	  AND (? OR archived_at IS NULL)
	  AND (? = '' OR instr(search_text, ?) > 0)
	  AND (updated_at, id) < (?, ?)
	ORDER BY updated_at DESC, id DESC
	LIMIT ?`

// The catalog index is kept merged into one segment. A query reads every
// segment's list of each of its trigrams, and the common ones ("pla", "an ")
// are in most documents: in one segment, whose long lists carry an index to
// skip by, a query takes tens of microseconds at 10,000 documents; with one
// more segment beside it (which every transaction that writes the catalog
// adds) it takes milliseconds. Merging is FTS5's 'optimize', which rewrites
// the catalog index (about 200 pages at 10,000 documents): a moment after
// start and after the catalog was last written, as a transaction of its own
// rather than inside every catalog write, and never in the way of start-up.
const catalogTidyDelay = 500 * time.Millisecond

// inCatalogTx runs fn in a transaction that writes the catalog (a title, a
// description, a document created or deleted), and then asks for the
// catalog index to be merged.
func (s *Store) inCatalogTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	err := s.inTx(ctx, fn)
	if err == nil {
		select {
		case s.catalogWritten <- struct{}{}:
		default: // already asked
		}
	}
	return err
}

// tidyCatalog merges the catalog index once the catalog has had no write
// for catalogTidyDelay, until the store closes.
func (s *Store) tidyCatalog() {
	defer close(s.tidied)
	for {
		select {
		case <-s.closing:
			return
		case <-s.catalogWritten:
		}
		timer := time.NewTimer(catalogTidyDelay)
	quiet:
		for {
			select {
			case <-s.closing:
				timer.Stop()
				return
			case <-s.catalogWritten:
				timer.Reset(catalogTidyDelay)
			case <-timer.C:
				break quiet
			}
		}
		// A failure leaves the index correct, only slower to read; the
		// next catalog write tries again. A damaged database takes no
		// writes at all.
		if s.damage.Load() == nil {
			_ = optimizeCatalogIndex(context.Background(), s.write)
		}
	}
}

// optimizeCatalogIndex merges the catalog index into one segment (little
// to do when it is one already).
func optimizeCatalogIndex(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `INSERT INTO channel_catalog_search (channel_catalog_search) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("optimize the catalog index: %w", err)
	}
	return nil
}

// planLines is the set of a plan's lines that the index holds: every
// distinct line but those of spaces alone (the migration's rule too).
func planLines(text string) map[string]bool {
	set := map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		if strings.Trim(line, " ") != "" {
			set[line] = true
		}
	}
	return set
}

// indexPlanLines brings the plan's lines in the index from those of the
// previous checkpoint's text to those of text, in the checkpoint's
// transaction: it deletes the lines that went and adds the ones that came,
// so a checkpoint costs what changed since the last one, whatever the
// plan's length. It must run before the new text replaces the old one.
func indexPlanLines(ctx context.Context, tx *sql.Tx, channelID, text string) error {
	var previous string
	err := tx.QueryRowContext(ctx, `SELECT source FROM plan_texts WHERE channel_id = ?`, channelID).Scan(&previous)
	if err != nil && err != sql.ErrNoRows {
		return fmt.Errorf("read the plan's last checkpoint: %w", err)
	}
	before, after := planLines(previous), planLines(text)
	for line := range before {
		if after[line] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM channel_plan_lines WHERE channel_id = ? AND line = ?`, channelID, line); err != nil {
			return fmt.Errorf("index the plan: %w", err)
		}
	}
	for line := range after {
		if before[line] {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO channel_plan_lines (channel_id, line) VALUES (?, ?)`, channelID, line); err != nil {
			return fmt.Errorf("index the plan: %w", err)
		}
	}
	return nil
}

// Search limits (GET /api/search).
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 50
	MaxSearchQuery     = 200 // characters
	MaxMatchText       = 200 // characters of a matching line
)

// SearchOptions select a search over titles, descriptions and plan text.
type SearchOptions struct {
	Query            string // 1..200 characters after trimming
	RepositoryNodeID string // empty: every repository
	Limit            int    // 1..50; 0 means the default
}

// SearchMatch is where a document matched: the field, the 1-based line in
// it, and that line trimmed around the match.
type SearchMatch struct {
	Field string // "title", "description" or "plan"
	Line  int
	Text  string
}

// Match fields.
const (
	FieldTitle       = "title"
	FieldDescription = "description"
	FieldPlan        = "plan"
)

// SearchResult is one document a search found.
type SearchResult struct {
	Channel Channel
	Match   SearchMatch
}

// Search finds documents whose title or description contains the query
// (letter case and Unicode composition folded, as the listing does), or
// whose plan at its last checkpoint contains it (letter case folded).
// Active documents come before archived ones, the most recently updated
// first. A query shorter than three characters searches titles and
// descriptions only: the trigram index cannot answer it, and reading every
// plan is not bounded.
func (s *Store) Search(ctx context.Context, opt SearchOptions) ([]SearchResult, error) {
	q := strings.TrimSpace(opt.Query)
	if n := utf8.RuneCountInString(q); n < 1 || n > MaxSearchQuery {
		return nil, invalid("invalid-query", "a search must be 1 to %d characters (got %d)", MaxSearchQuery, n)
	}
	limit := opt.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	if limit < 1 || limit > MaxSearchLimit {
		return nil, invalid("invalid-limit", "limit must be from 1 to %d", MaxSearchLimit)
	}
	folded := foldKey(q)
	var ids *sql.Rows
	var err error
	if utf8.RuneCountInString(q) >= minIndexedQuery && utf8.RuneCountInString(folded) >= minIndexedQuery {
		ids, err = s.read.QueryContext(ctx, `SELECT c.id FROM channels c
			WHERE c.id IN (
				SELECT sr.channel_id FROM channel_catalog_search s
				JOIN channel_search_rows sr ON sr.rowid = s.rowid
				WHERE channel_catalog_search MATCH ?
				UNION
				SELECT pl.channel_id FROM channel_plan_search p
				JOIN channel_plan_lines pl ON pl.rowid = p.rowid
				WHERE channel_plan_search MATCH ?)
			  AND (? = '' OR c.repository_node_id = ?)
			ORDER BY c.archived_at IS NOT NULL, c.updated_at DESC, c.id DESC
			LIMIT ?`, ftsPhrase(folded), ftsPhrase(q),
			opt.RepositoryNodeID, opt.RepositoryNodeID, limit)
	} else {
		ids, err = s.read.QueryContext(ctx, `SELECT id FROM channels
			WHERE (? = '' OR repository_node_id = ?) AND instr(search_text, ?) > 0
			ORDER BY archived_at IS NOT NULL, updated_at DESC, id DESC
			LIMIT ?`, opt.RepositoryNodeID, opt.RepositoryNodeID, folded, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var found []string
	for ids.Next() {
		var id string
		if err := ids.Scan(&id); err != nil {
			ids.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		found = append(found, id)
	}
	ids.Close()
	if err := ids.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	results := make([]SearchResult, 0, len(found))
	for _, id := range found {
		var plan string
		c, err := scanChannelPlan(s.read.QueryRowContext(ctx, `SELECT `+channelColumns+`, coalesce(pt.source, '')`+
			channelFrom+` LEFT JOIN plan_texts pt ON pt.channel_id = c.id WHERE c.id = ?`, id), &plan)
		if err == sql.ErrNoRows {
			continue // deleted since
		}
		if err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		if m, ok := findMatch(c, plan, q, folded); ok {
			results = append(results, SearchResult{Channel: c, Match: m})
		}
	}
	return results, nil
}

func scanChannelPlan(row *sql.Row, plan *string) (Channel, error) {
	var c Channel
	var desc sql.NullString
	err := row.Scan(&c.ID, &c.RepositoryNodeID, &c.Repository, &c.Title, &c.Slug, &c.ParentSlug,
		&c.ArchivedAt, &c.CreatedAt, &c.UpdatedAt, &desc, &c.DescriptionRevision, &c.ParentChannelID, &c.CreationSource, plan)
	if desc.Valid {
		c.Description = &desc.String
	}
	return c, err
}

// findMatch names the first field of the document that holds the query:
// the title, then the description, then the plan.
func findMatch(c Channel, plan, q, folded string) (SearchMatch, bool) {
	if strings.Contains(foldKey(c.Title), folded) {
		return SearchMatch{Field: FieldTitle, Line: 1, Text: matchText(c.Title, q)}, true
	}
	if c.Description != nil {
		if line, text, ok := matchLine(*c.Description, q, folded); ok {
			return SearchMatch{Field: FieldDescription, Line: line, Text: text}, true
		}
	}
	if line, text, ok := matchLine(plan, q, folded); ok {
		return SearchMatch{Field: FieldPlan, Line: line, Text: text}, true
	}
	return SearchMatch{}, false
}

// matchLine finds the first line of text that holds the query, folded as
// the catalog folds it or, for plan text, as the index folds it (lower
// case).
func matchLine(text, q, folded string) (int, string, bool) {
	lower := strings.ToLower(q)
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(foldKey(line), folded) || strings.Contains(strings.ToLower(line), lower) {
			return i + 1, matchText(line, q), true
		}
	}
	return 0, "", false
}

// matchText trims a line to at most MaxMatchText characters around the
// query's first occurrence, marking a cut end with "…".
func matchText(line, q string) string {
	line = strings.TrimSpace(line)
	runes := []rune(line)
	if len(runes) <= MaxMatchText {
		return line
	}
	at := indexFold(runes, []rune(q))
	qn := utf8.RuneCountInString(q)
	start := max(0, at-(MaxMatchText-qn)/2)
	end := min(len(runes), start+MaxMatchText)
	start = max(0, end-MaxMatchText)
	window := runes[start:end]
	if start > 0 {
		window[0] = '…'
	}
	if end < len(runes) {
		window[len(window)-1] = '…'
	}
	return string(window)
}

// indexFold is the rune index of needle in haystack, letter case aside, or
// 0 when it is not there rune for rune.
func indexFold(haystack, needle []rune) int {
	for i := 0; i+len(needle) <= len(haystack); i++ {
		match := true
		for j, r := range needle {
			if unicode.ToLower(haystack[i+j]) != unicode.ToLower(r) {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	return 0
}
