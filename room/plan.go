package room

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// checkpointEvery is how many updates may follow the last checkpoint
// before the room writes a new one.
const checkpointEvery = 200

// keepUpdates is how many updates before a checkpoint the journal keeps.
// They are not needed to rebuild the text; they let a tab that was away
// (or had a push in flight when Chopin quit) catch up by rebasing instead
// of reloading, so it can tell whether its own push was accepted.
const keepUpdates = 200

// serverClientID marks updates the server made itself (HTTP edits, the
// Planner's edit_plan, decision placement), so no browser mistakes them
// for its own.
const serverClientID = "server"

// plannerClientID marks the updates of the Planner's edit_plan, so a tab can
// show what the Planner changed. Like serverClientID, no browser may push it.
const plannerClientID = "planner"

// plan is the room's copy of the document text and its history since the
// last checkpoint. The version counts every accepted update (it is also the
// plan revision the Planner and the HTTP API see).
type plan struct {
	epoch     string
	version   int64
	text      string
	units     int      // the UTF-16 length of text
	cpVersion int64    // version of the last checkpoint
	cpWriting bool     // a checkpoint is being written outside the lock (checkpointIfDue)
	base      int64    // the version tail starts from
	tail      []Update // the updates after base; tail[i].Version == base+i+1
	// histBase is where the history the journal keeps starts (histBase <=
	// base). The kept updates up to the stored checkpoint, histBase+1 to
	// base, stay in the database until a client or a comment needs them
	// (historyLocked): an idle room holds only the text.
	histBase int64

	// The outline of the text, computed when first asked for at a version:
	// parsing a large plan costs far more than any single edit.
	blocks        []Block
	blocksVersion int64
	blocksEpoch   string
}

// blocksLocked returns the outline of the current text.
func (p *plan) blocksLocked() []Block {
	if p.blocks == nil || p.blocksVersion != p.version || p.blocksEpoch != p.epoch {
		p.blocks, p.blocksVersion, p.blocksEpoch = Blocks(p.text), p.version, p.epoch
	}
	return p.blocks
}

func (p *plan) load(ctx context.Context, r *Room) error {
	rec, err := r.hub.persist.LoadPlan(ctx, r.channelID)
	if err != nil {
		return err
	}
	if !rec.Exists {
		// A browser-created document has no plan until it is first opened.
		cp := Checkpoint{Epoch: newID(), Version: 0, Source: "# " + r.channel.Title + "\n"}
		if err := r.hub.persist.CheckpointPlan(ctx, r.channelID, cp); err != nil {
			return err
		}
		p.epoch, p.text, p.units = cp.Epoch, cp.Source, UTF16Len(cp.Source)
		return nil
	}
	cp := rec.Checkpoint
	p.epoch, p.version, p.text, p.cpVersion = cp.Epoch, cp.Version, cp.Source, cp.Version
	defer func() { p.units = UTF16Len(p.text) }() // once the journal is replayed
	// Kept updates up to the checkpoint are history only.
	journal := rec.Journal
	for len(journal) > 0 && journal[0].Version <= cp.Version {
		journal = journal[1:]
	}
	p.base, p.histBase = cp.Version, cp.Version
	if kept := rec.Journal[:len(rec.Journal)-len(journal)]; len(kept) > 0 && kept[len(kept)-1].Version == cp.Version &&
		kept[len(kept)-1].Version-kept[0].Version == int64(len(kept)-1) {
		p.histBase = kept[0].Version - 1
	}
	for _, u := range journal {
		text, err := applyUpdate(p.text, u)
		if err == nil && u.Version != p.version+1 {
			err = fmt.Errorf("version %d follows %d", u.Version, p.version)
		}
		if err != nil {
			// The journal cannot be replayed past this entry. Keep what could
			// be, and start a new history so that every client reloads it.
			r.hub.logf(r).Error("plan journal is damaged; keeping the text up to the last good update",
				"version", p.version, "err", err)
			p.epoch, p.base, p.histBase, p.tail = newID(), p.version, p.version, nil
			p.cpVersion = -1 // force the checkpoint
			return p.checkpoint(ctx, r)
		}
		p.text, p.version = text, u.Version
		p.tail = append(p.tail, u)
	}
	return nil
}

// historyLocked brings the kept updates before base, which load left in the
// database, into the tail. When the journal no longer holds them as they
// were kept, the history is let go: a client that needed it gets the whole
// text, as one beyond the history always does.
func (p *plan) historyLocked(ctx context.Context, r *Room) error {
	if p.histBase >= p.base {
		return nil
	}
	rec, err := r.hub.persist.LoadPlan(ctx, r.channelID)
	if err != nil {
		return err
	}
	var kept []Update
	for _, u := range rec.Journal {
		if u.Version > p.histBase && u.Version <= p.base {
			kept = append(kept, u)
		}
	}
	if int64(len(kept)) != p.base-p.histBase || kept[0].Version != p.histBase+1 || kept[len(kept)-1].Version != p.base {
		p.histBase = p.base
		return nil
	}
	p.tail = append(kept, p.tail...)
	p.base = p.histBase
	return nil
}

func applyUpdate(text string, u Update) (string, error) {
	cs, err := ParseChangeSet(u.Changes)
	if err != nil {
		return "", err
	}
	return cs.Apply(text)
}

// checkpoint stores the full text and lets the journal go, but for the
// last keepUpdates updates.
func (p *plan) checkpoint(ctx context.Context, r *Room) error {
	if p.cpVersion == p.version && p.epoch != "" {
		return nil
	}
	// Comment anchors are stored first: the journal that moves them from
	// where they were last stored is about to shrink.
	if err := r.comments.storeAnchorsLocked(ctx, r); err != nil {
		return err
	}
	cp := p.checkpointRecordLocked()
	if err := r.hub.persist.CheckpointPlan(ctx, r.channelID, cp); err != nil {
		return err
	}
	p.cpVersion = p.version
	return nil
}

// checkpointRecordLocked is the checkpoint of the current text, after
// letting go of the kept updates it no longer needs in memory.
func (p *plan) checkpointRecordLocked() Checkpoint {
	if drop := p.version - p.histBase - keepUpdates; drop > 0 {
		p.histBase += drop
		if cut := p.histBase - p.base; cut > 0 {
			p.tail = slices.Clone(p.tail[cut:])
			p.base = p.histBase
		}
	}
	return Checkpoint{Epoch: p.epoch, Version: p.version, Source: p.text, KeepAfter: p.histBase}
}

// checkpointIfDue writes a checkpoint once checkpointEvery updates follow
// the last one. It runs after the change that made it due was answered
// (a push's plan:ack is queued first), and writes outside the room's lock,
// so no acknowledgement waits for a checkpoint: not the one of the push
// that made it due, nor one of another tab's push meanwhile. The journal
// holds every update until the checkpoint commits, so a crash at any point
// loses nothing. One checkpoint is written at a time; close waits for it.
func (r *Room) checkpointIfDue(ctx context.Context) {
	r.mu.Lock()
	p := &r.plan
	if r.closed || r.gone || p.cpWriting || p.version-p.cpVersion < checkpointEvery {
		r.mu.Unlock()
		return
	}
	// Comment anchors are stored first: the journal that moves them from
	// where they were last stored is about to shrink. Only moved threads
	// are written, once per checkpoint.
	if err := r.comments.storeAnchorsLocked(ctx, r); err != nil {
		r.mu.Unlock()
		r.hub.logf(r).Error("checkpoint", "err", err)
		return
	}
	cp := p.checkpointRecordLocked()
	p.cpWriting = true
	r.mu.Unlock()

	err := r.hub.persist.CheckpointPlan(context.WithoutCancel(ctx), r.channelID, cp)

	r.mu.Lock()
	p.cpWriting = false
	if err == nil && cp.Epoch == p.epoch {
		p.cpVersion = max(p.cpVersion, cp.Version)
	}
	r.cpDone.Broadcast()
	r.mu.Unlock()
	if err != nil {
		// The journal still holds every update: nothing is lost, the
		// next change tries again.
		r.hub.logf(r).Error("checkpoint", "err", err)
	}
}

// openLocked answers plan:open: the updates a client at (epoch, version)
// missed while the journal still has them, otherwise the whole text.
func (p *plan) openLocked(ctx context.Context, r *Room, epoch string, version int64) any {
	if epoch == p.epoch && version >= p.histBase && version < p.base {
		if err := p.historyLocked(ctx, r); err != nil {
			r.hub.logf(r).Error("read the plan's kept updates; answering with the whole text", "err", err)
		}
	}
	if epoch == p.epoch && version >= p.base && version <= p.version {
		return msgPlanUpdates{Type: "plan:updates", Epoch: p.epoch, Version: version,
			Updates: nonNil(p.tail[version-p.base:])}
	}
	return msgPlanSnapshot{Type: "plan:snapshot", Epoch: p.epoch, Version: p.version, Source: p.text}
}

func nonNil(u []Update) []Update {
	if u == nil {
		return []Update{}
	}
	return u
}

// prepareLocked checks updates against the current text and returns the text
// they produce and its UTF-16 length, stamping each with its version.
// Nothing changes yet.
func (p *plan) prepareLocked(updates []Update) (string, int, error) {
	text, units := p.text, p.units
	var span editSpan // where the one update of a push (nearly every push) changed the text
	for i := range updates {
		u := &updates[i]
		cs, err := ParseChangeSet(u.Changes)
		var next string
		if err == nil {
			next, span, err = cs.applyKnown(text, units)
		}
		if err != nil {
			return "", 0, errorf(CodeInvalidChanges, "Change %d of this edit does not fit the document at version %d: %v.", i+1, p.version, err)
		}
		text, units = next, cs.LenAfter()
		u.Version = p.version + int64(i) + 1
	}
	if len(text) > MaxSourceBytes {
		return "", 0, errorf(CodeDocumentTooLarge, "The plan would be %d bytes; a plan holds at most %d bytes of source.", len(text), MaxSourceBytes)
	}
	check := CheckReserved
	if len(updates) == 1 {
		check = func(before, after string) error { return checkReservedIn(before, after, span) }
	}
	if err := check(p.text, text); err != nil {
		return "", 0, err
	}
	return text, units, nil
}

// acceptLocked makes stored updates current and publishes them.
// units is the UTF-16 length of text.
func (p *plan) acceptLocked(r *Room, updates []Update, text string, units int) {
	p.acceptMovedLocked(r, updates, text, units, nil)
}

// acceptMovedLocked is acceptLocked for a change that moved blocks (one
// update, an edit_plan batch): the comment threads on them go with them.
func (p *plan) acceptMovedLocked(r *Room, updates []Update, text string, units int, moves []blockMove) {
	from := p.version
	p.text, p.units = text, units
	p.version = updates[len(updates)-1].Version
	p.tail = append(p.tail, updates...)
	r.broadcastLocked(msgPlanUpdates{Type: "plan:updates", Epoch: p.epoch, Version: from, Updates: updates})
	r.comments.mapLocked(r, updates, moves)
	// The caller runs checkpointIfDue once it has answered and let go of
	// the lock.
}

// Push commits a client's updates made at version, then acknowledges and
// publishes them. A push at any other version is refused as stale, with
// the current version, so the client pulls, rebases and pushes again.
// The caller runs checkpointIfDue once the acknowledgement is sent.
func (r *Room) Push(ctx context.Context, version int64, updates []Update) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writableLocked(); err != nil {
		return r.plan.version, err
	}
	if version != r.plan.version {
		return r.plan.version, &Error{Code: CodeStaleVersion,
			Message: "The plan has moved on to version " + strconv.FormatInt(r.plan.version, 10) + "; pull the changes and push again."}
	}
	if len(updates) == 0 {
		return r.plan.version, nil
	}
	text, units, err := r.plan.prepareLocked(updates)
	if err != nil {
		return r.plan.version, err
	}
	if err := r.hub.persist.CommitPlan(ctx, r.channelID, updates); err != nil {
		return r.plan.version, fmt.Errorf("commit plan: %w", err)
	}
	r.plan.acceptLocked(r, updates, text, units)
	return r.plan.version, nil
}

// ReplaceText makes the plan read text, as one server update. revision must
// be the current version: an edit of an older one would undo what it missed.
// It is how an HTTP PUT, MCP's update_document and an import's replacement
// change the plan: the update is the comparison of the two texts by lines
// and then words (DiffChangeSet), so open editors rebase onto, and comment
// threads move through, only what changed.
func (r *Room) ReplaceText(ctx context.Context, revision int64, text string) (int64, error) {
	defer r.checkpointIfDue(ctx) // after the lock is let go
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writableLocked(); err != nil {
		return r.plan.version, err
	}
	if revision != r.plan.version {
		return r.plan.version, &Error{Code: CodeStaleRevision,
			Message: "The plan is at revision " + strconv.FormatInt(r.plan.version, 10) + ", not " + strconv.FormatInt(revision, 10) + "; read it again and redo the edit."}
	}
	text = NormalizeLineEndings(text)
	if text == r.plan.text {
		return r.plan.version, nil
	}
	if !hasContent(Blocks(text)) {
		// The rule edit_plan follows: a plan is never emptied.
		return r.plan.version, errorf(CodeEmptyDocument, "A plan cannot be emptied: send the whole new plan with at least one block.")
	}
	if err := CheckReserved(r.plan.text, text); err != nil {
		return r.plan.version, err
	}
	return r.commitServerTextLocked(ctx, text)
}

// commitServerTextLocked stores and publishes a server-made change to text,
// which the caller has already checked.
func (r *Room) commitServerTextLocked(ctx context.Context, text string) (int64, error) {
	u, err := r.serverUpdateLocked(text)
	if err != nil {
		return r.plan.version, err
	}
	u.Author = authorOf(ctx, Author{Kind: AuthorServer})
	return r.commitUpdateLocked(ctx, u, text, serverClientID, nil)
}

// commitBatchLocked stores and publishes an edit_plan batch: its own
// change set, which says exactly which blocks it wrote, and the blocks it
// moved, which their comment threads follow.
func (r *Room) commitBatchLocked(ctx context.Context, text string, batch batchChange) (int64, error) {
	u, err := r.updateLocked(text, batch.changes)
	if err != nil {
		return r.plan.version, err
	}
	u.Author = authorOf(ctx, Author{Kind: AuthorPlanner})
	return r.commitUpdateLocked(ctx, u, text, plannerClientID, batch.moves)
}

// commitUpdateLocked stores the update u, marked as clientID's, that turns
// the plan into text, and publishes it. The comment threads that go with
// the blocks a batch moves are stored with it, in one transaction.
func (r *Room) commitUpdateLocked(ctx context.Context, u Update, text, clientID string, moves []blockMove) (int64, error) {
	u.ClientID = clientID
	var moved []Thread
	if len(moves) > 0 && r.hub.comments != nil {
		cs, err := ParseChangeSet(u.Changes)
		if err != nil {
			return r.plan.version, err
		}
		moved = r.comments.movedThreadsLocked(u, cs, moves, text)
	}
	if len(moved) > 0 {
		if err := r.hub.comments.SaveThreads(ctx, r.channelID, moved, []Update{u}); err != nil {
			return r.plan.version, fmt.Errorf("commit plan: %w", err)
		}
		for _, t := range moved {
			r.comments.stored[t.ID] = t.Passage
		}
	} else if err := r.hub.persist.CommitPlan(ctx, r.channelID, []Update{u}); err != nil {
		return r.plan.version, fmt.Errorf("commit plan: %w", err)
	}
	r.plan.acceptMovedLocked(r, []Update{u}, text, UTF16Len(text), moves)
	return r.plan.version, nil
}

// serverUpdateLocked builds the update that turns the current text into
// text: the two compared by lines, then words (DiffChangeSet).
func (r *Room) serverUpdateLocked(text string) (Update, error) {
	if len(text) > MaxSourceBytes {
		return Update{}, errorf(CodeDocumentTooLarge, "The plan would be %d bytes; a plan holds at most %d bytes of source.", len(text), MaxSourceBytes)
	}
	return r.updateLocked(text, DiffChangeSet(r.plan.text, text))
}

// updateLocked is the server's update of changes, which turn the current
// text into text.
func (r *Room) updateLocked(text string, changes ChangeSet) (Update, error) {
	if len(text) > MaxSourceBytes {
		return Update{}, errorf(CodeDocumentTooLarge, "The plan would be %d bytes; a plan holds at most %d bytes of source.", len(text), MaxSourceBytes)
	}
	js, err := changes.MarshalJSON()
	if err != nil {
		return Update{}, err
	}
	return Update{Version: r.plan.version + 1, ClientID: serverClientID, Changes: js}, nil
}

// Plan is a consistent view of the plan.
type Plan struct {
	Epoch    string  `json:"epoch"`
	Version  int64   `json:"version"`
	Revision int64   `json:"revision"`
	Source   string  `json:"source"`
	Blocks   []Block `json:"blocks"`
}

// Plan returns the current plan with its blocks.
func (r *Room) Plan() Plan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Plan{Epoch: r.plan.epoch, Version: r.plan.version, Revision: r.plan.version, Source: r.plan.text,
		Blocks: r.plan.blocksLocked()}
}

// Source is the plan's revision and text, without its outline: a caller
// that needs the blocks of an idle room's text (the summaries' jobs) parses
// them itself, outside the room's lock, and the room keeps no outline it
// was not asked for by its own members or the Planner.
func (r *Room) Source() (revision int64, source string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.plan.version, r.plan.text
}

// View is the plan as the Planner's read tools see it.
func (r *Room) View() PlanView {
	r.mu.Lock()
	defer r.mu.Unlock()
	var threads []Thread
	for _, t := range r.threadsLocked() {
		if t.Status == ThreadOpen || t.Status == ThreadAccepted {
			threads = append(threads, t)
		}
	}
	return PlanView{Title: r.channel.Title, URL: r.channel.URL, Revision: r.plan.version, Source: r.plan.text,
		Blocks: r.plan.blocksLocked(), Threads: threads}
}
