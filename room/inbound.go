package room

// The text rule (package textrule) where text enters a document: what an
// edit writes into the plan, whoever makes it (a tab's push, an HTTP PUT,
// the Planner's edit_plan, MCP's update_document, an import), and a
// comment's notes. The doors have already refused what is not UTF-8; these
// refuse the control characters a plan and a note do not take.

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/chopin-desktop/chopin/textrule"
)

// checkPlanText refuses an edit whose new text, after[span.From:span.NewEnd]
// (the rest was in the plan before), holds a control character other than
// tab and line feed, naming its line and column. Only what the edit wrote
// is read, so a keystroke costs its own length.
func checkPlanText(after string, span editSpan) error {
	var p *textrule.Problem
	if !errors.As(textrule.Text(after[span.From:span.NewEnd]), &p) {
		return nil
	}
	at := span.From + p.Offset
	lineStart := strings.LastIndexByte(after[:at], '\n') + 1
	return errorf(CodeInvalidText, "Line %d, column %d of the plan %s; a plan is text, with tab and line breaks its only control characters. Remove it and make the edit again.",
		strings.Count(after[:at], "\n")+1, utf8.RuneCountInString(after[lineStart:at])+1, p.What)
}

// checkNoteText refuses a comment's note that breaks the rule.
func checkNoteText(text string) error {
	if err := textrule.Text(text); err != nil {
		return errorf(CodeInvalidText, "This comment %v; a comment is text, with tab and line breaks its only control characters. Remove it and send the comment again.", err)
	}
	return nil
}
