package room

// A plan as a Markdown file, out and in: the checks a file must pass to
// become a document's plan (each problem named with its line), the line
// endings a file had, and the decision cards (question and answer) and
// accepted comments (passage and notes) written out inline as Markdown
// quotes.

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
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
	Source     string     // the plan text, with "\n" line endings
	LineEnding LineEnding // what the file used: CRLF only when every line break was "\r\n"
	Title      string     // the text of its first "# " heading, or ""
}

// ReadPlanFile checks a Markdown file for use as a new document's plan,
// as an edit of any plan is checked, and refuses it with every problem found
// (up to 20), each on its own line naming the file's line.
func ReadPlanFile(data []byte) (PlanFile, error) {
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
	inFence := ""
	for n, line := range strings.Split(source, "\n") {
		n++
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF") // a byte order mark is kept, but is not the title's
		}
		if !utf8.ValidString(line) {
			add(n, "is not UTF-8 text; save the file as UTF-8")
			continue
		}
		if i := strings.IndexFunc(line, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }); i >= 0 {
			add(n, "holds the control character U+%04X at column %d; a plan is text", line[i], utf8.RuneCountInString(line[:i])+1)
		}
		if decisionTag().MatchString(line) {
			add(n, "%s marks a decision card, which only Chopin places; write the question and answer as text instead (chopin export --decisions=inline does), or delete the line", strings.TrimSpace(line))
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
	return PlanFile{Source: source, LineEnding: ending, Title: title}, nil
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
		return b.String(), true
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
	switch {
	case d.Answer != nil:
		answer := answerText(*d.Answer)
		if d.AnsweredBy != "" {
			answer += " (@" + d.AnsweredBy + ")"
		}
		quote("**Answer:** ", answer)
	case d.Status == DecisionOpen || d.Status == "":
		quote("", "_Not answered yet._")
	default:
		quote("", "_"+strings.ToUpper(d.Status[:1])+d.Status[1:]+" without an answer._")
	}
	return strings.TrimSuffix(b.String(), "\n")
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
