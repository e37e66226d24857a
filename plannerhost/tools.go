package plannerhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/agentconn"
	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// The host tools run against the document's room (DESIGN.md section 7;
// docs/host-tools.md). Failures the Planner should read are structured tool
// errors with the room's code and words.

// CallTool runs one host tool for a live turn; ctx ends with the turn.
func (h *Host) CallTool(ctx context.Context, call agentconn.ToolCall) (json.RawMessage, error) {
	ch, err := h.docs.Document(ctx, call.Document)
	if err != nil {
		return nil, toolError(err)
	}
	r, release, err := h.hub.Acquire(ctx, ch)
	if err != nil {
		return nil, err
	}
	defer release()
	mem := h.outlines.of(call.Document)
	var out any
	switch call.Name {
	case room.ToolReadPlan:
		out, err = readPlan(r, mem, call.Input)
	case room.ToolEditPlan:
		out, err = editPlan(room.WithAuthor(ctx, h.author(call)), r, mem, call.Input)
	case room.ToolAsk:
		out, err = ask(ctx, r, mem, call.Input, func(c room.QuestionCall) (room.QuestionCall, func(room.Outcome) room.Outcome) {
			return h.questionFor(call.Document, c)
		})
	case room.ToolOpenDecisions:
		out, err = openDecisions(r, mem, call.Input)
	case room.ToolUploadPlanImage: // offered only with decision-option-previews
		out, err = h.uploadPlanImage(ctx, ch, call.Input)
	case room.ToolReadReference: // offered only when the Chat refers to a document
		out, err = h.readReference(ctx, call.Document, call.Input)
	case ToolListVersions: // offered when the Host has the history
		out, err = h.listVersions(ctx, call.Document, call.Input)
	case ToolReadVersion:
		out, err = h.readVersion(ctx, r, call.Document, call.Input)
	default:
		// agentconn refuses names outside the turn's tools; the turn offers
		// only these.
		err = &wire.ToolError{Code: "unknown-tool", Message: call.Name + " is not one of Chopin's host tools."}
	}
	if err != nil {
		return nil, toolError(err)
	}
	return marshal(out)
}

// readPlan returns the page as the text the model reads, a JSON string: the
// spec's one host result that is not the tool's structured value.
func readPlan(r *room.Room, mem *outlineMemory, input json.RawMessage) (any, error) {
	args, err := room.ParseReadPlanArgs(input)
	if err != nil {
		return nil, err
	}
	view := mem.view(r.View())
	page, err := room.ReadPlan(view, args)
	if err != nil {
		return nil, err
	}
	return page.Text(), nil
}

func editPlan(ctx context.Context, r *room.Room, mem *outlineMemory, input json.RawMessage) (any, error) {
	args, err := room.ParseEditPlanArgs(input)
	if err != nil {
		return nil, err
	}
	res, err := r.EditPlan(ctx, args, mem.seen(args.Revision))
	if err != nil {
		return nil, err
	}
	mem.remember(res.Revision, res.Blocks)
	return res, nil
}

// askResult is ask's result: the outcome as input-result carries it, and the
// plan as it is once the question settled.
type askResult struct {
	room.Outcome
	CurrentPlan room.CurrentPlan `json:"current_plan"`
}

func (a askResult) MarshalJSON() ([]byte, error) {
	outcome, err := a.Outcome.MarshalJSON()
	if err != nil {
		return nil, err
	}
	plan, err := marshal(a.CurrentPlan)
	if err != nil {
		return nil, err
	}
	return append(append(outcome[:len(outcome)-1], `,"current_plan":`...), append(plan, '}')...), nil
}

// ask waits for the people's answer for as long as the turn lasts; a turn
// that ends first withdraws the cards.
func ask(ctx context.Context, r *room.Room, mem *outlineMemory, input json.RawMessage,
	shape func(room.QuestionCall) (room.QuestionCall, func(room.Outcome) room.Outcome)) (any, error) {
	args, err := room.ParseAskArgs(input)
	if err != nil {
		return nil, err
	}
	settled := make(chan room.Outcome, 1)
	qc, restore := shape(args.Call())
	request, err := r.Ask(ctx, qc, args.Block, func(o room.Outcome) { settled <- restore(o) })
	if err != nil {
		return nil, err
	}
	// Chat says the Planner waits on Decisions.
	r.Notice(ctx, room.AskedLine(qc))
	select {
	case o := <-settled:
		return askResult{Outcome: o, CurrentPlan: mem.currentPlan(r)}, nil
	case <-ctx.Done():
		if err := r.Withdraw(context.Background(), request); err != nil {
			return nil, err
		}
		return nil, ctx.Err()
	}
}

func openDecisions(r *room.Room, mem *outlineMemory, input json.RawMessage) (any, error) {
	var none struct{}
	if len(bytes.TrimSpace(input)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(input))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&none); err != nil {
			return nil, &wire.ToolError{Code: room.CodeInvalidArgument, Kind: "InvalidArgument",
				Message: "open_decisions takes no arguments: call it with {}."}
		}
	}
	open, discarded := r.OpenDecisions()
	return struct {
		Decisions   []room.Decision  `json:"decisions"`
		Discarded   []room.Decision  `json:"discarded"`
		CurrentPlan room.CurrentPlan `json:"current_plan"`
	}{open, discarded, mem.currentPlan(r)}, nil
}

// toolError makes a room's refusal the structured tool error the Planner
// reads and Work details shows. Other errors pass through: agentconn logs
// them and tells the Planner only that the tool failed.
func toolError(err error) error {
	var re *room.Error
	if !errors.As(err, &re) {
		if errors.Is(err, ErrNotFound) {
			return &wire.ToolError{Code: "document-unavailable", Kind: "DocumentUnavailable",
				Message: "This document no longer exists."}
		}
		return err
	}
	te := &wire.ToolError{Code: re.Code, Kind: kindOf(re.Code), Message: re.Message}
	if re.Stale != nil {
		te.Message = staleMessage(re.Message, re.Stale)
	}
	return te
}

// kindOf is a code's display name: stale-revision is StaleRevision.
func kindOf(code string) string {
	var b strings.Builder
	for w := range strings.SplitSeq(code, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// maxToolErrorChars is the most a structured tool error's message holds.
const maxToolErrorChars = 4000

// staleMessage is a stale-revision refusal with what the Planner needs to
// redo its batch: the current revision, the indexes whose digests changed
// and the current outline, in read_plan's outline format. The error's
// message is the only text the Planner receives, and it holds at most 4,000
// characters, so a long outline is cut with a note to read it instead.
func staleMessage(message string, s *room.Stale) string {
	var b strings.Builder
	b.WriteString(message)
	fmt.Fprintf(&b, "\nrevision: %d\nchanged: ", s.Revision)
	if len(s.Changed) == 0 {
		b.WriteString("none")
	}
	for i, c := range s.Changed {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, c)
	}
	fmt.Fprintf(&b, "\noutline: %d blocks (index type lines digest)\n", len(s.Blocks))
	for i, blk := range s.Blocks {
		line := fmt.Sprintf("%d %s %d-%d %s\n", blk.Index, blk.Type, blk.StartLine, blk.EndLine, blk.Digest)
		rest := fmt.Sprintf("… %d more blocks: read_plan shows them.", len(s.Blocks)-i)
		if utf8.RuneCountInString(b.String())+len(line)+len(rest) > maxToolErrorChars {
			b.WriteString(rest)
			break
		}
		b.WriteString(line)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// marshal is json.Marshal without HTML escaping: a plan's <Callout> reaches
// the model as written.
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// outlineMemory remembers, per document, the outlines the Planner was shown
// at recent revisions: edit_plan's stale refusal lists the indexes whose
// digests changed since the outline the Planner edited against, and
// read_plan pages through a large plan without parsing it for every page.
type outlineMemory struct {
	mu        sync.Mutex
	revisions []int64 // oldest first, at most keptOutlines
	blocks    map[int64][]room.Block
	source    string // the text blocks[current] was parsed from
	current   int64
}

// keptOutlines bounds how many revisions' outlines a document remembers.
const keptOutlines = 16

type outlineMemories struct {
	mu   sync.Mutex
	docs map[string]*outlineMemory
}

func (m *outlineMemories) of(documentID string) *outlineMemory {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.docs == nil {
		m.docs = map[string]*outlineMemory{}
	}
	mem := m.docs[documentID]
	if mem == nil {
		mem = &outlineMemory{blocks: map[int64][]room.Block{}, current: -1}
		m.docs[documentID] = mem
	}
	return mem
}

func (m *outlineMemories) forget(documentID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.docs, documentID)
}

// view fills in the view's blocks, parsing the text only when it changed.
func (m *outlineMemory) view(v room.PlanView) room.PlanView {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current == v.Revision && m.source == v.Source {
		v.Blocks = m.blocks[v.Revision]
		if v.Blocks != nil {
			return v
		}
	}
	v.Blocks = room.Blocks(v.Source)
	m.source, m.current = v.Source, v.Revision
	m.rememberLocked(v.Revision, v.Blocks)
	return v
}

func (m *outlineMemory) currentPlan(r *room.Room) room.CurrentPlan {
	return room.NewCurrentPlan(m.view(r.View()))
}

func (m *outlineMemory) remember(revision int64, blocks []room.Block) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rememberLocked(revision, blocks)
}

func (m *outlineMemory) rememberLocked(revision int64, blocks []room.Block) {
	if _, ok := m.blocks[revision]; !ok {
		m.revisions = append(m.revisions, revision)
	}
	m.blocks[revision] = blocks
	for len(m.revisions) > keptOutlines {
		delete(m.blocks, m.revisions[0])
		m.revisions = m.revisions[1:]
	}
}

// seen is the outline shown at revision, or nil when it is not remembered.
func (m *outlineMemory) seen(revision int64) []room.Block {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.blocks[revision]
}
