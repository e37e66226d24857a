package room

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// `#` references: a person's message may point at other documents ("compare
// with #Launch plan"). The message keeps each as a Reference in its details,
// with the revision and the digest of the plan it saw when it was sent, so
// the Planner can tell whether the document changed since. A reference
// names the document by its ID: it survives a rename, and Chat shows it
// under the document's current title. The Planner reads a referenced
// document with the read_reference host tool; references never change
// which document the editing tools write.

// Kinds of reference: a whole document, or a passage of one (some of its
// blocks, or text inside them), kept anchored as a comment thread's passage
// is (LocatePassage).
const (
	ReferenceDocument = "document"
	ReferencePassage  = "passage"
)

// Bounds of a passage reference.
const (
	MaxReferenceQuote = 200 // characters of a passage a reference keeps as its quote
	// MaxPassageSteps is the most kept changes LocatePassage maps a passage
	// through; one referenced longer ago is found by its blocks or quote.
	MaxPassageSteps = 20_000
)

// MaxReferences is the most documents one message refers to.
const MaxReferences = 10

// ReferenceRequest is a reference as a client sends it: the document's ID
// and, for a passage, its offsets in UTF-16 code units of the document's
// plan at Revision (as CodeMirror counts). The label and what was observed
// are the server's, never the client's.
type ReferenceRequest struct {
	Kind      string `json:"kind"`
	ChannelID string `json:"channelId"`
	From      *int   `json:"from,omitempty"`
	To        *int   `json:"to,omitempty"`
	// Revision is the revision the client read the offsets at; the
	// document's revision now when it is left out. A passage whose
	// document changed since is refused: the offsets may name other text.
	Revision *int64 `json:"revision,omitempty"`
}

// Reference is a kept reference.
type Reference struct {
	Kind               string `json:"kind"`
	ChannelID          string `json:"channelId"`
	Label              string `json:"label"` // the document's title when the message was sent
	ObservedRevision   int64  `json:"observedRevision"`
	ObservedSourceHash string `json:"observedSourceHash"` // Digest of the plan at that revision
	// Passage is what a passage reference pointed at, at ObservedRevision.
	Passage *ReferencedPassage `json:"passage,omitempty"`
}

// ReferencedPassage is a passage of a referenced document as it was when
// the message was sent: its offsets (UTF-16 code units of the plan at the
// reference's ObservedRevision), the first and last block it lies in, the
// offsets of its ends inside those blocks, its first words, a digest of its
// whole text (to tell whether it changed), its lines and the heading above.
type ReferencedPassage struct {
	From      int        `json:"from"`
	To        int        `json:"to"`
	Blocks    []BlockRef `json:"blocks"`
	InFirst   int        `json:"inFirst"` // From, counted from the start of the first block
	InLast    int        `json:"inLast"`  // To, counted from the start of the last block
	Quote     string     `json:"quote"`   // its first MaxReferenceQuote characters, an ellipsis ending a cut one
	Digest    string     `json:"digest"`  // Digest of its whole text
	StartLine int        `json:"startLine"`
	EndLine   int        `json:"endLine"`
	Heading   string     `json:"heading,omitempty"` // the nearest heading above it
}

// ResolveReferences checks the documents a message refers to, in order,
// once each, and returns them as kept: each one's title, revision and plan
// digest now. A document that does not exist is refused. It reads each
// document's room, so it must be called without any room's lock held.
func (h *Hub) ResolveReferences(ctx context.Context, reqs []ReferenceRequest) ([]Reference, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	if len(reqs) > MaxReferences {
		return nil, errorf(CodeInvalidArgument, "A message refers to at most %d documents; this one refers to %d.", MaxReferences, len(reqs))
	}
	if h.channels == nil {
		return nil, errorf(CodeInvalidArgument, "Chopin cannot look documents up here, so a message cannot refer to one.")
	}
	out := make([]Reference, 0, len(reqs))
	seen := map[string]bool{}
	for _, req := range reqs {
		key, err := referenceKey(req)
		if err != nil {
			return nil, err
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		ref, err := h.observe(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, ref)
	}
	return out, nil
}

// referenceKey checks a request's shape and names what it refers to, so a
// message refers to each document, and each passage, once.
func referenceKey(req ReferenceRequest) (string, error) {
	switch req.Kind {
	case ReferenceDocument:
		if req.From != nil || req.To != nil || req.Revision != nil {
			return "", errorf(CodeInvalidArgument, "A reference to a whole document takes no from, to or revision; a passage's kind is %q.", ReferencePassage)
		}
		return req.ChannelID, nil
	case ReferencePassage:
		if req.From == nil || req.To == nil {
			return "", errorf(CodeInvalidArgument, "A reference to a passage needs its from and to: offsets in the document's plan.")
		}
		return fmt.Sprintf("%s:%d:%d", req.ChannelID, *req.From, *req.To), nil
	}
	return "", errorf(CodeInvalidArgument, "A reference's kind is %q or %q; %q is not one.", ReferenceDocument, ReferencePassage, req.Kind)
}

// observe is a reference to the document req names, or a passage of it, as
// it is now.
func (h *Hub) observe(ctx context.Context, req ReferenceRequest) (Reference, error) {
	id := req.ChannelID
	if strings.TrimSpace(id) == "" {
		return Reference{}, errorf(CodeInvalidArgument, "A reference names its document by channelId.")
	}
	ch, err := h.channels.Channel(ctx, id)
	if err != nil {
		if h.channels.IsNotFound(err) {
			return Reference{}, errorf(CodeNotFound, "No document has the ID %s: it may have been deleted. Pick the document again with #.", id)
		}
		return Reference{}, err
	}
	r, release, err := h.Acquire(ctx, ch)
	if err != nil {
		return Reference{}, err
	}
	defer release()
	v := r.View()
	ref := Reference{Kind: ReferenceDocument, ChannelID: ch.ID, Label: ch.Title,
		ObservedRevision: v.Revision, ObservedSourceHash: Digest(v.Source)}
	if req.Kind != ReferencePassage {
		return ref, nil
	}
	if req.Revision != nil && *req.Revision != v.Revision {
		return Reference{}, errorf(CodeStaleRevision, "“%s” changed since the passage was picked (revision %d; it is now at revision %d). Pick the passage again.",
			oneLine(ch.Title), *req.Revision, v.Revision)
	}
	p, err := observePassage(v.Source, *req.From, *req.To)
	if err != nil {
		return Reference{}, errorf(CodeInvalidPassage, "The passage of “%s” %s", oneLine(ch.Title), err.Error())
	}
	ref.Kind, ref.Passage = ReferencePassage, &p
	return ref, nil
}

// MessageReferences returns the documents a message refers to: a person's,
// or an instruction Invoke posted.
func MessageReferences(m Message) []Reference {
	if m.Role == RolePlanner || len(m.Details) == 0 {
		return nil
	}
	var d personDetails
	if json.Unmarshal(m.Details, &d) != nil {
		return nil
	}
	return d.References
}

// Send posts a person's message with its files and the documents it refers
// to: the files checked as ReadAttachments says, the references as
// ResolveReferences does, then sent as Say sends any message.
func (r *Room) Send(ctx context.Context, who Identity, text string, ups []AttachmentUpload, refs []ReferenceRequest) (Message, error) {
	if len(ups) == 0 && len(refs) == 0 {
		return r.Say(ctx, who, text)
	}
	files, err := ReadAttachments(ups, r.hub.attachments)
	if err != nil {
		return Message{}, err
	}
	kept, err := r.hub.ResolveReferences(ctx, refs)
	if err != nil {
		return Message{}, err
	}
	return r.say(ctx, who, text, encode(personDetails{Attachments: files, References: kept}))
}

// ToolReadReference is the host tool that reads a referenced document.
const ToolReadReference = "read_reference"

// ReadReferenceTool is read_reference as a turn offers it: only to a
// document whose Chat refers to another.
var ReadReferenceTool = ToolSpec{
	Name: ToolReadReference,
	Description: "Read another document that a Chat message refers to (people refer to documents with #; the turn's prompt lists them with their ids). " +
		"It pages like read_plan and takes its offset, limit and column, with the referenced document's id. The first line says the revision it was referenced at " +
		"and whether the document changed since; when the message refers to passages of it, each passage's text as it reads now, and where it is, comes first (or that it was deleted). It only reads: edit_plan and ask always write this document, never a referenced one.",
	InputSchema: json.RawMessage(`{"type":"object","required":["id"],"properties":{` +
		`"id":{"type":"string","minLength":1,"description":"The referenced document's id, as the prompt lists it."},` +
		`"offset":{"type":"integer","minimum":1,"description":"The 1-based line to start at; default 1."},` +
		`"limit":{"type":"integer","minimum":1,"description":"The most lines to show."},` +
		`"column":{"type":"integer","minimum":1,"description":"The 1-based character of line offset to start at, to continue a line cut by the previous result."}` +
		`},"additionalProperties":false}`),
}

// ParseReadReferenceArgs decodes read_reference's input strictly: the
// referenced document's id and read_plan's paging arguments.
func ParseReadReferenceArgs(input []byte) (id string, args ReadPlanArgs, err error) {
	var in struct {
		ID string `json:"id"`
		ReadPlanArgs
	}
	if err := decodeStrict(input, &in); err != nil {
		return "", args, errorf(CodeInvalidArgument, "read_reference takes {id, offset?, limit?, column?}: %v.", err)
	}
	if strings.TrimSpace(in.ID) == "" {
		return "", args, errorf(CodeInvalidArgument, "read_reference needs the id of a referenced document; the prompt lists them.")
	}
	return in.ID, in.ReadPlanArgs, nil
}

// ReferenceStatus is the first line of a read_reference result: when the
// document was referenced and whether it changed since.
func ReferenceStatus(ref Reference, now PlanView) string {
	if Digest(now.Source) == ref.ObservedSourceHash {
		return fmt.Sprintf("reference: referenced as “%s” at revision %d; unchanged since.\n", oneLine(ref.Label), ref.ObservedRevision)
	}
	return fmt.Sprintf("reference: referenced as “%s” at revision %d; changed since: it is now at revision %d.\n",
		oneLine(ref.Label), ref.ObservedRevision, now.Revision)
}

// ReferencesPrompt is what a turn's prompt says of the documents and
// passages its message refers to, or "" for none.
func ReferencesPrompt(refs []Reference) string {
	if len(refs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nThe message refers to other documents; read one with read_reference {\"id\": ...}:\n")
	for _, ref := range refs {
		if p := ref.Passage; p != nil {
			fmt.Fprintf(&b, "- a passage: %s of “%s” (id %s)%s, at revision %d when referenced: “%s”\n",
				lineRange(p.StartLine, p.EndLine), oneLine(ref.Label), ref.ChannelID, under(p.Heading), ref.ObservedRevision, p.Quote)
			continue
		}
		fmt.Fprintf(&b, "- “%s” (id %s), at revision %d when referenced\n", oneLine(ref.Label), ref.ChannelID, ref.ObservedRevision)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// lineRange is "line 4" or "lines 12–18".
func lineRange(first, last int) string {
	if first == last {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d–%d", first, last)
}

// under is ", under “heading”", or "" with no heading.
func under(heading string) string {
	if heading == "" {
		return ""
	}
	return ", under “" + heading + "”"
}

// maxPassageText is the most bytes of one passage read_reference shows
// before the page.
const maxPassageText = 8 * 1024

// PassagesReport is what read_reference says first of the passages of a
// document a message refers to: each one's place and text now, or that it
// was deleted or rewritten. located[i] is refs[i]'s passage now.
func PassagesReport(refs []Reference, located []PassageNow) string {
	var b strings.Builder
	for i, ref := range refs {
		p, now := ref.Passage, located[i]
		then := fmt.Sprintf("%s at revision %d", lineRange(p.StartLine, p.EndLine), ref.ObservedRevision)
		switch now.State {
		case AnchorOrphaned:
			fmt.Fprintf(&b, "passage: “%s” (%s) was deleted or rewritten since; it is not in the document now.\n", p.Quote, then)
			continue
		case AnchorExact:
			fmt.Fprintf(&b, "passage: %s%s (%s; unchanged since):\n", lineRange(now.StartLine, now.EndLine), under(now.Heading), then)
		default:
			fmt.Fprintf(&b, "passage: %s%s (%s; its text changed since):\n", lineRange(now.StartLine, now.EndLine), under(now.Heading), then)
		}
		text := now.Text
		if len(text) > maxPassageText {
			cut := maxPassageText
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + fmt.Sprintf("\n… (cut: read the rest from line %d)", now.StartLine)
		}
		b.WriteString(text + "\n\n")
	}
	return b.String()
}

// observePassage is the passage [from, to) of source as a reference keeps
// it, or why it is not one (the words follow "The passage of “title”").
func observePassage(source string, from, to int) (ReferencedPassage, error) {
	if from < 0 || to <= from {
		return ReferencedPassage{}, fmt.Errorf("is empty (from %d, to %d); pick some text or a block.", from, to)
	}
	start, err := advance(source, 0, from)
	if err != nil {
		return ReferencedPassage{}, fmt.Errorf("starts outside its plan, which is %d characters long; pick it again.", UTF16Len(source))
	}
	end, err := advance(source, start, to-from)
	if err != nil {
		return ReferencedPassage{}, fmt.Errorf("ends outside its plan, which is %d characters long; pick it again.", UTF16Len(source))
	}
	blocks := Blocks(source)
	ls := splitLines(source)
	first, last := blockAtLine(blocks, ls.lineAt(start)), blockAtLine(blocks, ls.lineAt(end-1))
	if first < 0 || last < 0 {
		return ReferencedPassage{}, errors.New("starts or ends on a blank line between blocks; pick text inside them.")
	}
	fs, _, _ := ls.bounds(blocks[first].StartLine)
	lsStart, _, _ := ls.bounds(blocks[last].StartLine)
	p := ReferencedPassage{From: from, To: to,
		Blocks:  []BlockRef{{Index: first, Digest: blocks[first].Digest}},
		InFirst: from - UTF16Len(source[:fs]), InLast: to - UTF16Len(source[:lsStart]),
		Quote: quoteOf(source[start:end]), Digest: Digest(source[start:end]),
		StartLine: ls.lineAt(start), EndLine: ls.lineAt(end - 1), Heading: headingOf(source, blocks, first)}
	if last != first {
		p.Blocks = append(p.Blocks, BlockRef{Index: last, Digest: blocks[last].Digest})
	}
	return p, nil
}

// blockAtLine is the index of the block holding line, or -1.
func blockAtLine(blocks []Block, line int) int {
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].EndLine >= line })
	if i < len(blocks) && blocks[i].StartLine <= line {
		return i
	}
	return -1
}

// quoteOf is text as a reference quotes it: its first MaxReferenceQuote
// characters on one line, an ellipsis ending a cut one.
func quoteOf(text string) string {
	q := strings.Join(strings.Fields(text), " ")
	if r := []rune(q); len(r) > MaxReferenceQuote {
		return strings.TrimSpace(string(r[:MaxReferenceQuote-1])) + "…"
	}
	return q
}

// PassageStep is one kept change of a document's history, as LocatePassage
// maps a passage through it: the change set from version From to To.
type PassageStep struct {
	From, To int64
	Changes  json.RawMessage
}

// How LocatePassage found a passage.
const (
	FoundByHistory = "history" // mapped through every change since
	FoundByBlock   = "block"   // the history is pruned: found by its block's digest
	FoundByQuote   = "quote"   // found where its quote occurs once
)

// PassageNow is where a referenced passage is in its document now, and how
// it reads: State is AnchorExact when it reads as it did, AnchorChanged
// when its text changed, AnchorOrphaned when it was deleted or rewritten
// past finding (no place then).
type PassageNow struct {
	State     string `json:"state"`
	Found     string `json:"found,omitempty"`
	Revision  int64  `json:"revision"`
	From      int    `json:"from"`
	To        int    `json:"to"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	Quote     string `json:"quote,omitempty"`
	Heading   string `json:"heading,omitempty"`
	Text      string `json:"-"` // the passage's whole text now
}

// LocatePassage finds passage p, referenced at revision observed, in source,
// the document's plan at revision now: mapped through steps, the history's
// changes after observed (oldest first, at most MaxPassageSteps), as a
// comment thread's anchor is; where they do not reach from observed to now
// (pruned, or too many) or the mapping lost it (a block moved, which a
// change set writes as a deletion), found by its blocks' digests, then by
// its quote where that occurs once; else orphaned.
func LocatePassage(p ReferencedPassage, observed int64, steps []PassageStep, source string, now int64) PassageNow {
	at := Passage{From: p.From, To: p.To, State: AnchorExact}
	cur := observed
	for _, st := range steps {
		if cur == now || at.State == AnchorOrphaned {
			break
		}
		if st.From != cur || st.To > now {
			break
		}
		cs, err := ParseChangeSet(st.Changes)
		if err != nil {
			break
		}
		mapPassage(&at, cs)
		cur = st.To
	}
	if cur == now && at.State != AnchorOrphaned {
		return passageAt(p, source, now, at.From, at.To, FoundByHistory)
	}
	blocks := Blocks(source)
	if from, to, ok := findByBlocks(p, source, blocks); ok {
		return passageAt(p, source, now, from, to, FoundByBlock)
	}
	if from, to, ok := findByQuote(p, source); ok {
		return passageAt(p, source, now, from, to, FoundByQuote)
	}
	return PassageNow{State: AnchorOrphaned, Revision: now}
}

// passageAt is the passage at [from, to) of source.
func passageAt(p ReferencedPassage, source string, now int64, from, to int, found string) PassageNow {
	start, err1 := advance(source, 0, from)
	end, err2 := advance(source, start, to-from)
	if err1 != nil || err2 != nil || end <= start {
		return PassageNow{State: AnchorOrphaned, Revision: now}
	}
	text := source[start:end]
	out := PassageNow{State: AnchorExact, Found: found, Revision: now, From: from, To: to, Quote: quoteOf(text), Text: text}
	if Digest(text) != p.Digest {
		out.State = AnchorChanged
	}
	ls := splitLines(source)
	out.StartLine, out.EndLine = ls.lineAt(start), ls.lineAt(end-1)
	blocks := Blocks(source)
	if b := blockAtLine(blocks, out.StartLine); b >= 0 {
		out.Heading = headingOf(source, blocks, b)
	}
	return out
}

// findByBlocks is where p's first block (and last, if another) is now, when
// its digest names one block only: p's ends at their offsets inside them.
func findByBlocks(p ReferencedPassage, source string, blocks []Block) (from, to int, ok bool) {
	if len(p.Blocks) == 0 {
		return 0, 0, false
	}
	only := func(digest string, after int) int {
		found := -1
		for i := after; i < len(blocks); i++ {
			if blocks[i].Digest == digest {
				if found >= 0 {
					return -1
				}
				found = i
			}
		}
		return found
	}
	first := only(p.Blocks[0].Digest, 0)
	if first < 0 {
		return 0, 0, false
	}
	last := first
	if len(p.Blocks) > 1 {
		if last = only(p.Blocks[1].Digest, first+1); last < 0 {
			return 0, 0, false
		}
	}
	ls := splitLines(source)
	fs, _, _ := ls.bounds(blocks[first].StartLine)
	lsStart, _, _ := ls.bounds(blocks[last].StartLine)
	from, to = UTF16Len(source[:fs])+p.InFirst, UTF16Len(source[:lsStart])+p.InLast
	return from, to, from < to
}

// findByQuote is where p's quote occurs, when it occurs once, its words
// apart by any spaces or line breaks (the quote keeps them folded): all of
// p when the quote is its whole text, else as long as p was.
func findByQuote(p ReferencedPassage, source string) (from, to int, ok bool) {
	cut := strings.HasSuffix(p.Quote, "…")
	words := strings.Fields(strings.TrimSuffix(p.Quote, "…"))
	if len(words) == 0 {
		return 0, 0, false
	}
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	re, err := regexp.Compile(strings.Join(words, `\s+`))
	if err != nil {
		return 0, 0, false
	}
	found := re.FindAllStringIndex(source, 2)
	if len(found) != 1 {
		return 0, 0, false
	}
	from, to = UTF16Len(source[:found[0][0]]), UTF16Len(source[:found[0][1]])
	if cut {
		to = min(from+(p.To-p.From), UTF16Len(source))
	}
	return from, to, true
}

// PassageChoice is one block of a document as the passage picker lists it.
type PassageChoice struct {
	Index     int    `json:"index"`
	Type      string `json:"type"`
	From      int    `json:"from"` // UTF-16 offsets of the block's text
	To        int    `json:"to"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Heading   string `json:"heading,omitempty"` // the nearest heading above, the block itself if one
	Words     string `json:"words"`             // its first words
}

// MaxPassageChoices is the most blocks PassageChoices lists.
const MaxPassageChoices = 2000

// PassageChoices lists source's blocks for the passage picker, at most
// MaxPassageChoices, the Decision and Comment marks the server writes left
// out.
func PassageChoices(source string) []PassageChoice {
	blocks := Blocks(source)
	ls := splitLines(source)
	out := make([]PassageChoice, 0, min(len(blocks), MaxPassageChoices))
	heading := ""
	for _, b := range blocks {
		if len(out) == MaxPassageChoices {
			break
		}
		text := BlockSource(source, b)
		if b.Type == BlockHeading {
			heading = headingOf(source, blocks, b.Index)
		}
		if b.Type == BlockDecision {
			continue
		}
		start, _, _ := ls.bounds(b.StartLine)
		from := UTF16Len(source[:start])
		out = append(out, PassageChoice{Index: b.Index, Type: b.Type, From: from, To: from + UTF16Len(text),
			StartLine: b.StartLine, EndLine: b.EndLine, Heading: heading, Words: ClipLine(text, 80)})
	}
	return out
}

// headingOf is the heading block i is or is under, on one line.
func headingOf(source string, blocks []Block, i int) string {
	return oneLine(headingAbove(source, blocks, i))
}
