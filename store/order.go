package store

// Creation order (migration 014_creation_order.sql): the rows of a
// document's comment threads, decisions and jobs carry seq, the number the
// store gives each as it is inserted, counting up within the document. The
// lists ordered "oldest first" or "newest first" sort by it alone.

// nextSeq is the SQL expression for the seq of a row inserted into table
// for the document bound to its one parameter: one past the document's
// highest, read through the (channel_id, seq) index. The one write
// connection runs one transaction at a time, so two rows never get the
// same number. On an upsert that updates an existing row, seq is left as
// it was: a row keeps the place it was first given.
func nextSeq(table string) string {
	return `(SELECT coalesce(max(seq), 0) + 1 FROM ` + table + ` WHERE channel_id = ?)`
}
