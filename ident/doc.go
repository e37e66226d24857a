// Package ident holds the rules for the names Chopin's things are known by
// outside the server: a repository's owner/name and a document's ID. The
// store, the configuration and the command line check names with the same
// rules, so a name one of them takes, the others take too. It imports
// nothing of Chopin's but the kinds of error.
package ident
