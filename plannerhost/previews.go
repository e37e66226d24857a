package plannerhost

import (
	"slices"

	"github.com/chopin-desktop/chopin/agentconn/wire"
	"github.com/chopin-desktop/chopin/room"
)

// Option previews (spec "Option previews"): with decision-option-previews
// an option's preview is its own field, shown framed under the option, and
// a turn offers upload_plan_image. A link without the feature gets neither:
// each preview is joined onto the end of its option's description, and the
// answers it gets back are the ones it got before the feature (an option's
// answer still carries its preview, and a written answer to a question
// whose options had one is a chat answer).

// previewTools are the host tools a turn offers besides room.HostTools.
func (h *Host) previewTools(documentID string) []wire.Tool {
	if !h.agent.Granted(documentID, wire.FeatureDecisionOptionPreviews) {
		return nil
	}
	t := room.UploadPlanImageTool
	return []wire.Tool{{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}}
}

// questionFor is a validated question call as the document's link shows
// it, and how to give the link the answers it expects.
func (h *Host) questionFor(documentID string, c room.QuestionCall) (room.QuestionCall, func(room.Outcome) room.Outcome) {
	if h.agent.Granted(documentID, wire.FeatureDecisionOptionPreviews) {
		return c, func(o room.Outcome) room.Outcome { return o }
	}
	return joinPreviews(c)
}

// joinPreviews joins each option's preview onto the end of its description
// (after a blank line, so Markdown draws it as its own paragraph or fence)
// and returns the call with the answers restored to what they were with
// the preview as a field.
func joinPreviews(c room.QuestionCall) (room.QuestionCall, func(room.Outcome) room.Outcome) {
	same := func(o room.Outcome) room.Outcome { return o }
	if c.Method != room.MethodQuestionnaire {
		return c, same
	}
	previews := map[int]map[string]*string{} // question index, label: preview
	qs := make([]room.Question, len(c.Questions))
	for i, q := range c.Questions {
		q.Options = slices.Clone(q.Options)
		for j, o := range q.Options {
			if o.Preview == nil {
				continue
			}
			if previews[i] == nil {
				previews[i] = map[string]*string{}
			}
			if _, seen := previews[i][o.Label]; !seen {
				previews[i][o.Label] = o.Preview
			}
			if o.Description == "" {
				o.Description = *o.Preview
			} else {
				o.Description += "\n\n" + *o.Preview
			}
			o.Preview = nil
			q.Options[j] = o
		}
		qs[i] = q
	}
	if len(previews) == 0 {
		return c, same
	}
	c.Questions, c.PreviewsJoined = qs, true
	return c, func(o room.Outcome) room.Outcome {
		v, ok := o.Value.(room.QuestionnaireValue)
		if !ok {
			return o
		}
		answers := slices.Clone(v.Answers)
		for i, qa := range answers {
			p := previews[qa.QuestionIndex]
			switch {
			case p == nil:
			case qa.Kind == room.KindOption && qa.Answer != nil:
				answers[i].Preview = p[*qa.Answer]
			case qa.Kind == room.KindCustom:
				answers[i].Kind = room.KindChat
			}
		}
		v.Answers = answers
		o.Value = v
		return o
	}
}
