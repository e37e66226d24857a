package room

// A plan as a Markdown file, out and in: the checks a file must pass to
// become a document's plan (each problem named with its line), the line
// endings a file had, and the decision cards (question and answer) and
// accepted comments (passage and notes) written out inline as Markdown
// quotes.
//
// A file Chopin wrote is one it reads back: a <Decision id="..." /> or
// <Comment id="..." /> line, as an export that keeps them writes it, comes
// in as the text an export with decisions=inline writes for that record,
// read from wherever this Chopin holds it. Only the server places the
// marks, and a mark names a record of the document it was written in, so
// a new document cannot keep one; its words can.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/textrule"
)

// LineEnding is how a plan file ends its lines. The plan itself always
// holds "\n" (as CodeMirror does); a document imported from a file with
// "\r\n" keeps writing its files that way.
type LineEnding string

const (
	LF   LineEnding = "lf"
	CRLF LineEnding = "crlf"
)

// maxPlanFileProblems bounds the problems one refusal lists.
const maxPlanFileProblems = 20

// PlanFile is a Markdown file read as a plan.
type PlanFile struct {
	Source     string     // the plan text, with "\n" line endings and its records written as text
	LineEnding LineEnding // what the file used: CRLF only when every line break was "\r\n"
	Title      string     // the text of its first "# " heading, or ""
	Records    int        // how many record lines were written as text
}

// HeldRecords finds the records a file's record lines name, wherever this
// Chopin keeps them: a decision card, an accepted comment's thread. found
// is false for one it does not hold.
type HeldRecords interface {
	Decision(ctx context.Context, id string) (d Decision, found bool, err error)
	Thread(ctx context.Context, id string) (t Thread, found bool, err error)
}

// ReadPlanFile checks a Markdown file for use as a new document's plan,
// as an edit of any plan is checked, and refuses it with every problem found
// (up to 20), each on its own line naming the file's line. Each record line
// becomes its record's text (InlineDecisions, InlineComments), from held;
// one whose record held does not have is a problem, and so is a record's
// mark anywhere else.
func ReadPlanFile(ctx context.Context, data []byte, held HeldRecords) (PlanFile, error) {
	var problems []string
	add := func(line int, format string, args ...any) {
		if len(problems) < maxPlanFileProblems {
			problems = append(problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
		}
	}
	if len(data) > MaxSourceBytes {
		return PlanFile{}, errorf(CodeDocumentTooLarge, "The file is %d bytes; a plan holds at most %d bytes of source.", len(data), MaxSourceBytes)
	}
	text := string(data)
	if strings.TrimSpace(text) == "" {
		return PlanFile{}, errorf(CodeEmptyDocument, "The file is empty; a plan needs some text.")
	}
	crlf, lf := strings.Count(text, "\r\n"), strings.Count(text, "\n")
	ending := LF
	if crlf > 0 && crlf == lf && !strings.Contains(strings.ReplaceAll(text, "\r\n", ""), "\r") {
		ending = CRLF
	}
	source := NormalizeLineEndings(text)
	var title string
	var decisions []Decision
	var threads []Thread
	inFence := ""
	for n, line := range strings.Split(source, "\n") {
		n++
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF") // a byte order mark is kept, but is not the title's
		}
		var p *textrule.Problem
		if errors.As(textrule.Text(line), &p) {
			column := utf8.RuneCountInString(strings.ToValidUTF8(line[:p.Offset], "\uFFFD")) + 1
			if p.Rune == utf8.RuneError {
				add(n, "is not UTF-8 text (byte 0x%02X at column %d); save the file as UTF-8", line[p.Offset], column)
				continue
			}
			add(n, "%s at column %d; a plan is text, with tab the only control character in a line", p.What, column)
		}
		d, t, problem, err := readRecordLine(ctx, line, held)
		switch {
		case err != nil:
			return PlanFile{}, err
		case problem != "":
			add(n, "%s", problem)
		case d != nil:
			decisions = append(decisions, *d)
		case t != nil:
			threads = append(threads, *t)
		}
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case inFence != "" && strings.HasPrefix(trimmed, inFence):
			inFence = ""
		case inFence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			inFence = trimmed[:3]
		case inFence == "" && title == "" && strings.HasPrefix(line, "# "):
			title = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line[2:]), "#"))
		}
	}
	if len(problems) > 0 {
		noun := "problem"
		if len(problems) > 1 {
			noun = "problems"
		}
		return PlanFile{}, errorf(CodeInvalidPlanFile, "The file cannot become a plan; %d %s:\n%s", len(problems), noun, strings.Join(problems, "\n"))
	}
	if len(decisions)+len(threads) > 0 {
		source = InlineComments(InlineDecisions(source, decisions), threads)
	}
	return PlanFile{Source: source, LineEnding: ending, Title: title, Records: len(decisions) + len(threads)}, nil
}

// readRecordLine reads a line of a file for a record's mark: a whole
// <Decision id /> or <Comment id /> line gives its record from held, or a
// problem when held has none; a mark anywhere else is a problem. The words
// name what the mark is for, and what a person can do in any surface.
func readRecordLine(ctx context.Context, line string, held HeldRecords) (*Decision, *Thread, string, error) {
	if !decisionTag().MatchString(line) {
		return nil, nil, "", nil
	}
	const elsewhere = " (its document was deleted, or the file comes from another computer)"
	if m := decisionMark().FindStringSubmatch(line); m != nil {
		var d Decision
		found := false
		var err error
		if held != nil {
			d, found, err = held.Decision(ctx, m[1])
		}
		if err != nil || found {
			return &d, nil, "", err
		}
		return nil, nil, strings.TrimSpace(line) + " is the mark of a decision card that this Chopin does not hold" + elsewhere +
			"; delete the line, or write the question and its answer in its place", nil
	}
	if m := commentMark().FindStringSubmatch(line); m != nil {
		var t Thread
		found := false
		var err error
		if held != nil {
			t, found, err = held.Thread(ctx, m[1])
		}
		if err != nil || found {
			return nil, &t, "", err
		}
		return nil, nil, strings.TrimSpace(line) + " is the mark of an accepted comment that this Chopin does not hold" + elsewhere +
			"; delete the line, or write the comment in its place", nil
	}
	if strings.Contains(line, "<Comment") {
		return nil, nil, strings.TrimSpace(line) + " holds <Comment, the mark of an accepted comment, which only Chopin writes, on a line of its own; write the comment as text instead", nil
	}
	return nil, nil, strings.TrimSpace(line) + " holds <Decision, the mark of a decision card, which only Chopin writes, on a line of its own; write the question and its answer as text instead", nil
}

// WithLineEnding is source as a file with ending.
func WithLineEnding(source string, ending LineEnding) string {
	if ending == CRLF {
		return strings.ReplaceAll(source, "\n", "\r\n")
	}
	return source
}

// InlineDecisions replaces each decision card's line in source with its
// question and, once answered, the answer, as a Markdown quote, so the file
// reads on its own. Marks of cards not in ds are left as they are.
func InlineDecisions(source string, ds []Decision) string {
	byID := map[string]Decision{}
	for _, d := range ds {
		byID[d.ID] = d
	}
	return inlineMarks(source, decisionMark(), func(id string) (string, bool) {
		d, ok := byID[id]
		if !ok {
			return "", false
		}
		return decisionText(d), true
	})
}

// InlineComments replaces each accepted thread's <Comment> line in source
// with its record as a Markdown quote (the passage, who accepted it, the
// notes), so an exported file reads on its own and imports again. Lines of
// threads not in ts are left as they are.
func InlineComments(source string, ts []Thread) string {
	byID := map[string]Thread{}
	for _, t := range ts {
		byID[t.ID] = t
	}
	return inlineMarks(source, commentMark(), func(id string) (string, bool) {
		t, ok := byID[id]
		if !ok {
			return "", false
		}
		var b strings.Builder
		b.WriteString("> **Accepted comment** (@" + t.DecidedBy + ") on: " + oneLine(t.Passage.Quote))
		for _, n := range t.Notes {
			b.WriteString("\n>\n> @" + n.Author + ": " + strings.ReplaceAll(n.Text, "\n", "\n> "))
		}
		return withoutMarks(b.String()), true
	})
}

// inlineMarks replaces each line of source that mark matches (its first
// group the id) with text(id), where text has one.
func inlineMarks(source string, mark *regexp.Regexp, text func(id string) (string, bool)) string {
	lines := strings.Split(source, "\n")
	for i, line := range lines {
		if m := mark.FindStringSubmatch(line); m != nil {
			if t, ok := text(m[1]); ok {
				lines[i] = t
			}
		}
	}
	return strings.Join(lines, "\n")
}

// decisionText is one card as a Markdown quote.
func decisionText(d Decision) string {
	question := d.ID
	if call, err := ParseQuestionCall(d.Call); err == nil {
		question = cardQuestion(call, d.Index)
	}
	var b strings.Builder
	quote := func(prefix, text string) {
		for j, l := range strings.Split(text, "\n") {
			if j == 0 {
				l = prefix + l
			}
			b.WriteString(strings.TrimRight("> "+l, " ") + "\n")
		}
	}
	quote("**Decision:** ", question)
	b.WriteString(">\n")
	by := func(login string) string {
		if login == "" {
			return ""
		}
		return " (@" + login + ")"
	}
	switch {
	case d.Answer != nil:
		quote("**Answer:** ", answerText(*d.Answer)+by(d.AnsweredBy))
		if d.Status == DecisionDiscarded {
			b.WriteString(">\n")
			quote("", "_Discarded"+byWord(d.DiscardedBy)+"._")
		}
	case d.Status == DecisionOpen || d.Status == "":
		quote("", "_Not answered yet._")
	case d.Status == DecisionReopened:
		reopener := ""
		if n := len(d.Previous); n > 0 {
			reopener = d.Previous[n-1].ReopenedBy
		}
		quote("", "_Reopened"+byWord(reopener)+"; not answered again yet._")
	case d.Status == DecisionDiscarded:
		quote("", "_Discarded"+byWord(d.DiscardedBy)+" without an answer._")
	default:
		quote("", "_"+strings.ToUpper(d.Status[:1])+d.Status[1:]+" without an answer._")
	}
	// The answers it had before it was reopened, newest first, as the
	// specification's Previous element shows them.
	for i := len(d.Previous) - 1; i >= 0; i-- {
		p := d.Previous[i]
		b.WriteString(">\n")
		quote("**Previous:** ", answerText(p.Answer)+by(p.AnsweredBy)+", reopened"+byWord(p.ReopenedBy))
	}
	return withoutMarks(strings.TrimSuffix(b.String(), "\n"))
}

// byWord is " by @login", or nothing for no login.
func byWord(login string) string {
	if login == "" {
		return ""
	}
	return " by @" + login
}

// withoutMarks is a record's text with "<" written as "&lt;" where it would
// start a record's mark (a question about <Decision /> lines, say): it reads
// the same, and a file holding it imports as text.
func withoutMarks(s string) string {
	if !decisionTag().MatchString(s) {
		return s
	}
	return decisionTag().ReplaceAllStringFunc(s, func(m string) string { return "&lt;" + m[1:] })
}

// cardQuestion is the question one card asks.
func cardQuestion(c QuestionCall, index int) string {
	switch c.Method {
	case MethodQuestionnaire:
		if index >= 0 && index < len(c.Questions) {
			return c.Questions[index].Question
		}
	case MethodConfirm:
		if c.Message != "" {
			return strings.TrimSpace(c.Title + "\n" + c.Message)
		}
	}
	return c.Title
}

func answerText(a CardAnswer) string {
	switch {
	case len(a.Labels) > 0:
		return strings.Join(a.Labels, ", ")
	case a.Yes != nil && *a.Yes:
		return "Yes"
	case a.Yes != nil:
		return "No"
	case a.Choice != nil:
		return *a.Choice
	}
	return a.Text
}
