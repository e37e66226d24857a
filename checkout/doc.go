// Package checkout is read-only access to a repository's local checkout:
// the files, the search and the history the bundled Planner's own tools
// (list_files, read_file, search_code, git_log, git_show) give a model, and
// what the server shows of a checkout (its branch, commit and origin
// remote, and the owner/name a remote names).
//
// Every path a tool is given is relative to the checkout and resolved
// inside it: "..", any absolute path and a symbolic link that leads outside
// are refused, and .git is never listed, searched or read, at any depth and
// in any letter case. Resolve and OpenFile hold a caller with absolute
// paths in a folder of its own (the ACP bridge's file reads) to the same
// rule, and open regular files only, never waiting on a named pipe or a
// device. It never writes: Git runs with a timeout, without a pager, hooks,
// fsmonitor, external diff or textconv drivers, optional locks or the
// caller's GIT_* environment, and only a bounded line of its stderr ever
// reaches a result. Without Git on PATH, or in a folder that is no Git work
// tree, it lists, reads and searches by walking the folder, honouring the
// top-level .gitignore.
//
// It is a leaf library: it imports nothing of Chopin's. Its results are the
// checkout's own text, unmasked; a caller that hands them to a model masks
// them first (the bundled Planner does, with redact). It must not write to
// the checkout, run anything but git, or follow a path out of the checkout.
package checkout
