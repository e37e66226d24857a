package client

import (
	"errors"
	"slices"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// maxFullStages is how many stages a full card lists; the rest are counted
// in earlierStages.
const maxFullStages = 64

// ReportRuns reports every run of the session. Without run-stage-deltas a
// card keeps its 64 most recent stages and counts the others in
// earlierStages. With it, a report too large for one frame is split as the
// spec says: the first part has full cards, every later part delta cards
// carrying the rest of the stages, each part with the same active and paused.
func (s *Session) ReportRuns(active, paused []string, cards []wire.RunCard) error {
	l := s.currentLink()
	s.mu.Lock()
	s.live = len(active)+len(paused) > 0
	s.mu.Unlock()
	if active == nil {
		active = []string{}
	}
	if paused == nil {
		paused = []string{}
	}
	deltas := l.Has(wire.FeatureRunStageDeltas)
	parts, err := splitRuns(s.ID, active, paused, cards, deltas)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := l.Send(p); err != nil {
			return err
		}
	}
	return nil
}

func splitRuns(session string, active, paused []string, cards []wire.RunCard, deltas bool) ([]wire.Runs, error) {
	full := make([]wire.RunCard, len(cards))
	var rest [][]wire.Stage // stages left for delta parts, by card
	for i, c := range cards {
		c.StagesDelta = false
		if c.Stages == nil {
			c.Stages = []wire.Stage{}
		}
		stages := c.Stages
		if len(stages) > maxFullStages && !deltas {
			earlier := len(stages) - maxFullStages
			if c.EarlierStages != nil {
				earlier += *c.EarlierStages
			}
			c.EarlierStages = &earlier
			stages = stages[len(stages)-maxFullStages:]
		}
		c.Stages = stages
		full[i] = c
	}
	report := wire.Runs{Session: session, Active: active, Paused: paused, Cards: full}
	short := !slices.ContainsFunc(full, func(c wire.RunCard) bool { return len(c.Stages) > maxFullStages })
	if short && fits(report) {
		return []wire.Runs{report}, nil
	}
	if !deltas {
		return nil, errors.New("client: the runs report is over 2 MiB and the server did not grant run-stage-deltas")
	}
	// Full cards first, holding as many stages as fit (at most 64 each),
	// then delta parts with the rest. An array's encoding is its elements
	// joined by commas, so a part's size is its size without stages plus
	// each stage's own size and a comma: no re-encoding per stage.
	rest = make([][]wire.Stage, len(full))
	sizes := make([][]int, len(full))
	for i, c := range full {
		rest[i] = c.Stages
		for _, st := range c.Stages {
			sizes[i] = append(sizes[i], stageSize(st))
		}
	}
	var parts []wire.Runs
	for n := 0; n == 0 || slices.ContainsFunc(rest, func(s []wire.Stage) bool { return len(s) > 0 }); n++ {
		p := wire.Runs{Session: session, Active: active, Paused: paused, Cards: slices.Clone(full)}
		for i := range p.Cards {
			p.Cards[i].Stages = []wire.Stage{}
			if n > 0 {
				p.Cards[i].StagesDelta, p.Cards[i].EarlierStages = true, nil
			}
		}
		size := encodedSize(p)
		if size > wire.MaxFrameBytes {
			return nil, errors.New("client: the runs report does not fit one frame even without stages")
		}
		added := false
		for i := range p.Cards {
			for len(rest[i]) > 0 && (n > 0 || len(p.Cards[i].Stages) < maxFullStages) {
				grow := sizes[i][0]
				if len(p.Cards[i].Stages) > 0 {
					grow++ // the comma
				}
				if size+grow > wire.MaxFrameBytes {
					break
				}
				size += grow
				p.Cards[i].Stages = append(p.Cards[i].Stages, rest[i][0])
				rest[i], sizes[i], added = rest[i][1:], sizes[i][1:], true
			}
		}
		if n > 0 && !added {
			return nil, errors.New("client: a stage does not fit one frame")
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func stageSize(s wire.Stage) int {
	r := wire.Runs{Session: "s", Active: []string{}, Paused: []string{}, Cards: []wire.RunCard{{Stages: []wire.Stage{s}}}}
	r2 := r
	r2.Cards = []wire.RunCard{{Stages: []wire.Stage{}}}
	return encodedSize(r) - encodedSize(r2)
}

func encodedSize(r wire.Runs) int {
	b, err := wire.Encode(r)
	if err != nil {
		return wire.MaxFrameBytes + 1
	}
	return len(b)
}

// fits reports whether r encodes within one frame. Re-encoding per stage is
// quadratic, but only reports over 2 MiB are split, which is rare.
func fits(r wire.Runs) bool {
	b, err := wire.Encode(r)
	return err == nil && len(b) <= wire.MaxFrameBytes
}
