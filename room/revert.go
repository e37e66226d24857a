package room

// Revert of one change, or of one Planner turn, on top of everything that
// came after it. The change to undo is inverted against the text it was
// made on and carried forward through every later change by the same
// operational transformation tabs rebase with (Map); the changes of a
// turn are undone together, newest first, each inverse composed with the
// undo of the ones after it. A later change that touches what is being
// undone (edits inside text the change inserted, or at the place it
// deleted) makes the revert refuse: the undo would guess. The result is
// one new change on top, applied through the room like any server edit,
// so open tabs rebase through it and comment threads and decision lines
// map through it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// AuthorRevert is the author kind of a revert: a person undid a change or
// a Planner turn.
const AuthorRevert = "revert"

// RevertConflictCode is the code of a revert refused because later changes
// edit the same text. Not a room Error's code: the refusal carries the
// conflicts too (RevertConflictError), which the app answers itself.
const RevertConflictCode = "revert-conflict"

// HistoryChange is one kept change, as a revert reads it: the version it
// produced, when, by whom, and its change set from the version before.
type HistoryChange struct {
	Version int64
	Time    int64 // unix milliseconds
	Author  Author
	Changes json.RawMessage
}

// RevertConflict is a later change that edits text a revert would undo,
// and where that edit is in the current text (UTF-16 offsets, like the
// editor's).
type RevertConflict struct {
	Version int64  `json:"version"`
	Time    int64  `json:"time"`
	Author  Author `json:"author"`
	From    int    `json:"from"`
	To      int    `json:"to"`
}

// RevertConflictError refuses a revert that later changes overlap.
type RevertConflictError struct {
	Message   string
	Conflicts []RevertConflict
}

func (e *RevertConflictError) Error() string { return e.Message }

// ErrRevertMoved is Revert's refusal of a change set made for a version the
// plan is no longer at: the caller works it out again.
var ErrRevertMoved = errors.New("the plan moved on while the revert was worked out")

// RevertChanges works out the change set that undoes the changes undo
// picks among changes, which are consecutive, oldest first, through the
// current version; base is the text at the version before the first. It
// applies to the current text. conflicts names every later change, not
// undone itself, that touches what is undone; the change set is then of
// no use.
func RevertChanges(base string, changes []HistoryChange, undo func(HistoryChange) bool) (ChangeSet, []RevertConflict, error) {
	// The text is followed up to the last change undone, which is
	// inverted against it. After that, what the undo removes keeps its
	// content through every change not in its way, so only whether it
	// starts and ends a line is kept (the rule for text typed at its
	// edges), and no later change is applied to the whole text.
	last := -1
	for i, h := range changes {
		if undo(h) {
			last = i
		}
	}
	text, units := base, UTF16Len(base)
	var u ChangeSet // on the text at the change: what undoes the picked changes so far
	var edges []lineEdges
	var conflicts []RevertConflict
	for i, h := range changes {
		cs, err := ParseChangeSet(h.Changes)
		if err != nil {
			return ChangeSet{}, nil, fmt.Errorf("version %d: %w", h.Version, err)
		}
		if cs.LenBase() != units {
			return ChangeSet{}, nil, fmt.Errorf("version %d: %w", h.Version, cs.wrongLength(units))
		}
		next := ""
		if i <= last {
			if next, err = cs.Apply(text); err != nil {
				return ChangeSet{}, nil, fmt.Errorf("version %d: %w", h.Version, err)
			}
		}
		// Where earlier conflicts are, carried through every later change,
		// undone or not, into the current text.
		moveConflicts(conflicts, cs)
		switch {
		case i == last || i < last && undo(h):
			inv, err := invertChangeSet(cs, text)
			if err != nil {
				return ChangeSet{}, nil, fmt.Errorf("version %d: %w", h.Version, err)
			}
			if u.lenBase == 0 && len(u.sections) == 0 {
				u = inv
			} else if u, err = inv.Compose(u); err != nil {
				return ChangeSet{}, nil, fmt.Errorf("version %d: %w", h.Version, err)
			}
		case len(u.sections) > 0:
			if i < last {
				edges = edgesOf(text, u)
			}
			if from, to, hit := overlap(u, edges, cs); hit {
				conflicts = append(conflicts, RevertConflict{Version: h.Version, Time: h.Time, Author: h.Author, From: from, To: to})
			}
			if u, err = u.Map(cs, false); err != nil {
				return ChangeSet{}, nil, fmt.Errorf("version %d: %w", h.Version, err)
			}
			if i > last && len(changedRanges(u)) != len(edges) {
				// A change in the way cut into what is undone: from here on
				// any text typed at its edges is in the way too.
				edges = make([]lineEdges, len(changedRanges(u)))
			}
		}
		if i <= last {
			text = next
		}
		if i == last {
			edges = edgesOf(text, u)
		}
		units = cs.LenAfter()
	}
	if last < 0 {
		u = ChangeSet{}
		if units > 0 {
			u.add(section{len: units, kept: true})
		}
	}
	return u, conflicts, nil
}

// moveConflicts carries conflicts' places through cs, a change after them:
// text inserted at their edges is not theirs.
func moveConflicts(conflicts []RevertConflict, cs ChangeSet) {
	for i := range conflicts {
		c := &conflicts[i]
		if c.From == c.To {
			c.From = mapPos(cs, c.From, -1)
			c.To = c.From
			continue
		}
		c.From, c.To = mapPos(cs, c.From, 1), mapPos(cs, c.To, -1)
		c.To = max(c.To, c.From)
	}
}

// invertChangeSet is the change set that undoes cs, made on base: it
// applies to what cs produces and gives base back.
func invertChangeSet(cs ChangeSet, base string) (ChangeSet, error) {
	var inv ChangeSet
	pos := 0 // byte offset in base
	for _, s := range cs.sections {
		end, err := advance(base, pos, s.len)
		if err != nil {
			return ChangeSet{}, err
		}
		if s.kept {
			inv.add(section{len: s.len, kept: true})
		} else {
			inv.add(section{len: UTF16Len(s.insert), insert: base[pos:end]})
		}
		pos = end
	}
	if pos != len(base) {
		return ChangeSet{}, cs.wrongLength(UTF16Len(base))
	}
	return inv, nil
}

// changedRange is a run of a change set's changes: [a, aEnd] in the text
// it applies to, [b, bEnd] in the text it makes, and the text it inserts.
type changedRange struct {
	a, aEnd, b, bEnd int
	ins              string
}

// changedRanges lists cs's changes, runs of adjacent ones as one.
func changedRanges(cs ChangeSet) []changedRange {
	var out []changedRange
	a, b := 0, 0
	for _, s := range cs.sections {
		na, nb := a+s.len, b+s.len
		if !s.kept {
			nb = b + UTF16Len(s.insert)
			if s.len == 0 && nb == b {
				continue // changes nothing
			}
			if n := len(out); n > 0 && out[n-1].aEnd == a && out[n-1].bEnd == b {
				out[n-1].aEnd, out[n-1].bEnd = na, nb
				out[n-1].ins += s.insert
			} else {
				out = append(out, changedRange{a, na, b, nb, s.insert})
			}
		}
		a, b = na, nb
	}
	return out
}

// lineEdges is whether a run of text starts and ends a line: it starts
// with a line break, or ends with one.
type lineEdges struct{ startsBreak, endsBreak bool }

// edgesOf is, for each run undo changes in text, its lineEdges.
func edgesOf(text string, undo ChangeSet) []lineEdges {
	rs := changedRanges(undo)
	out := make([]lineEdges, len(rs))
	for i, r := range rs {
		run := unitsSlice(text, r.a, r.aEnd)
		out[i] = lineEdges{strings.HasPrefix(run, "\n"), strings.HasSuffix(run, "\n")}
	}
	return out
}

// overlap says whether later, a change of the text undo applies to,
// touches what undo would change (edges: its runs' lineEdges), so that
// undoing it after later would be a guess:
//   - later deletes or replaces any of the text undo removes (text an
//     undone change inserted), or inserts inside it;
//   - later inserts right before or after that text, on the same line
//     (typing on at the end of an undone word); a new line next to it
//     is not in the way;
//   - later inserts at the place undo puts deleted text back, or deletes
//     across it.
//
// from and to span later's touching changes in the text later makes.
func overlap(undo ChangeSet, edges []lineEdges, later ChangeSet) (from, to int, hit bool) {
	us := changedRanges(undo)
	for _, l := range changedRanges(later) {
		for i, u := range us {
			var e lineEdges
			if i < len(edges) {
				e = edges[i]
			}
			if !touching(u, e, l) {
				continue
			}
			if !hit {
				from, to, hit = l.b, l.bEnd, true
			} else {
				from, to = min(from, l.b), max(to, l.bEnd)
			}
			break
		}
	}
	return from, to, hit
}

// touching is overlap's rule for one run u of the undo, with its line
// edges e, and one run l of a later change.
func touching(u changedRange, e lineEdges, l changedRange) bool {
	if u.a == u.aEnd { // a place where deleted text goes back
		return l.a <= u.a && u.a <= l.aEnd && (l.a == l.aEnd || l.a < u.a && u.a < l.aEnd || l.ins != "")
	}
	if l.a < u.aEnd && l.aEnd > u.a {
		return true
	}
	if l.ins == "" {
		return false
	}
	if l.aEnd == u.a { // inserts right before
		return !strings.HasSuffix(l.ins, "\n") && !e.startsBreak
	}
	if l.a == u.aEnd { // inserts right after
		return !strings.HasPrefix(l.ins, "\n") && !e.endsBreak
	}
	return false
}

// unitsSlice is text from UTF-16 offset from to offset to ("" where they
// do not fall on characters of text).
func unitsSlice(text string, from, to int) string {
	i, err := advance(text, 0, from)
	if err != nil {
		return ""
	}
	j, err := advance(text, i, to-from)
	if err != nil {
		return ""
	}
	return text[i:j]
}

// Revert makes changes, the change set that undoes earlier changes
// (RevertChanges), worked out for version now, one new change on top,
// attributed to who as a revert, and says notice in Chat. It refuses with
// ErrRevertMoved when the plan is no longer at now.
func (r *Room) Revert(ctx context.Context, who Identity, now int64, changes ChangeSet, notice string) (int64, error) {
	defer r.checkpointIfDue(ctx) // after the lock is let go
	r.mu.Lock()
	if err := r.writableLocked(); err != nil {
		r.mu.Unlock()
		return r.plan.version, err
	}
	if now != r.plan.version {
		r.mu.Unlock()
		return now, ErrRevertMoved
	}
	text, err := changes.Apply(r.plan.text)
	if err == nil && text == r.plan.text {
		r.mu.Unlock()
		return now, nil
	}
	if err == nil {
		err = CheckReserved(r.plan.text, text)
	}
	if err == nil && !hasContent(Blocks(text)) {
		err = errorf(CodeEmptyDocument, "Undoing that would leave the plan empty, and a plan is never emptied: restore an earlier version instead, or edit by hand.")
	}
	var u Update
	if err == nil {
		u, err = r.updateLocked(text, changes)
	}
	if err == nil {
		u.Author = Author{Kind: AuthorRevert, Name: who.Login}
		_, err = r.commitUpdateLocked(ctx, u, text, serverClientID, nil)
	}
	v := r.plan.version
	r.mu.Unlock()
	if err != nil {
		return v, err
	}
	r.Notice(ctx, notice)
	return v, nil
}

// AuthorName is who made a change, as a sentence names them: the Planner,
// a person by name (who's display name when it is who), an MCP client by
// its name.
func AuthorName(a Author, who Identity) string {
	switch a.Kind {
	case AuthorPlanner:
		return "the Planner"
	case AuthorPerson, AuthorRestore, AuthorRevert:
		if a.Name == who.Login && who.Name != "" {
			return who.Name
		}
		if a.Name != "" {
			return a.Name
		}
		return "a person"
	case AuthorMCP:
		if a.Name != "" {
			return "the MCP client " + a.Name
		}
		return "an MCP client"
	case AuthorImport:
		return "an import"
	}
	return "Chopin"
}

// RevertConflictMessage is the refusal's sentence: what cannot be undone
// (subject, "Revision 14"), which later changes are in the way, and what
// to do instead.
func RevertConflictMessage(subject string, conflicts []RevertConflict, who Identity) string {
	// One name per author, with their revisions, in the order they came.
	type byAuthor struct {
		name string
		revs []int64
	}
	var list []*byAuthor
	seen := map[string]*byAuthor{}
	for _, c := range conflicts {
		n := AuthorName(c.Author, who)
		b := seen[n]
		if b == nil {
			b = &byAuthor{name: n}
			seen[n] = b
			list = append(list, b)
		}
		b.revs = append(b.revs, c.Version)
	}
	parts := make([]string, len(list))
	for i, b := range list {
		parts[i] = b.name + " (" + Revisions(b.revs) + ")"
	}
	changes := "a later change by "
	verb := "edits"
	if len(conflicts) > 1 {
		changes, verb = "later changes by ", "edit"
	}
	return subject + " cannot be undone cleanly: " + changes + joinAnd(parts) + " " + verb +
		" the same text. Restore an earlier version instead, or edit by hand."
}

// Revisions names versions, oldest first, each run of consecutive ones as
// a range: "revision 12", "revisions 12–15", "revisions 12–15, 18 and 20".
func Revisions(vs []int64) string {
	var runs []string
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && vs[j] == vs[j-1]+1 {
			j++
		}
		run := strconv.FormatInt(vs[i], 10)
		if j-i > 1 {
			run += "–" + strconv.FormatInt(vs[j-1], 10)
		}
		runs = append(runs, run)
		i = j
	}
	if len(vs) == 1 {
		return "revision " + runs[0]
	}
	return "revisions " + joinAnd(runs)
}
