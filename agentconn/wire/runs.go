package wire

import (
	"errors"
	"fmt"
)

// Workflow runs as a client reports them ("Workflow runs", "Run stage
// deltas"): run cards, their stages, and how a reported card merges into
// the one kept.

// RunCard is one workflow run as Chat shows it. A full card lists up to 64 of
// the run's most recent stages and counts the others in EarlierStages; with
// run-stage-deltas a delta card (StagesDelta) lists only new and changed
// stages. Times are whole seconds since the epoch.
type RunCard struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Status        string  `json:"status"`
	Started       int64   `json:"started"`
	Updated       int64   `json:"updated"`
	Ended         *int64  `json:"ended,omitempty"`
	StagesDelta   bool    `json:"stagesDelta,omitempty" wire:"true"` // "always true": a full card leaves it out
	Stages        []Stage `json:"stages"`
	EarlierStages *int    `json:"earlierStages,omitempty"`
	Waiting       int     `json:"waiting"`
}

// Stage is one stage of a run.
type Stage struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	ParentIDs []string `json:"parentIds,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	Status    string   `json:"status"`
	Started   *int64   `json:"started,omitempty"`
	Ended     *int64   `json:"ended,omitempty"`
}

// Run and stage statuses.
var (
	runStatuses   = set("running", "waiting", "paused", "finished", "blocked", "failed", "stopped")
	stageStatuses = set("pending", "running", "awaiting_input", "paused", "blocked", "completed", "failed", "skipped", "stopped")
)

// Live reports whether the run still counts as live: a finished card is
// finished only with Ended, so one without it is still live.
func (c *RunCard) Live() bool {
	switch c.Status {
	case "failed", "stopped":
		return false
	case "finished":
		return c.Ended == nil
	}
	return true
}

// Apply merges a reported card into c, the run as stored, following "Run
// stage deltas": a delta adds or replaces stages by id and keeps the rest and
// EarlierStages; a full card replaces every stage unless it lists none, in
// which case the stored stages (and EarlierStages) stay. The room uses it for
// what it stores; agentconn uses it for the status it reports.
func (c *RunCard) Apply(r RunCard) {
	stages, earlier := c.Stages, c.EarlierStages
	switch {
	case r.StagesDelta:
		stages = mergeStages(stages, r.Stages)
	case len(r.Stages) > 0 || len(stages) == 0:
		stages, earlier = append([]Stage(nil), r.Stages...), r.EarlierStages
	}
	*c = r
	c.StagesDelta = false
	c.Stages, c.EarlierStages = stages, earlier
}

func mergeStages(stored, delta []Stage) []Stage {
	at := make(map[string]int, len(stored))
	out := append([]Stage(nil), stored...)
	for i, s := range out {
		at[s.ID] = i
	}
	for _, s := range delta {
		if i, ok := at[s.ID]; ok {
			out[i] = s
			continue
		}
		at[s.ID] = len(out)
		out = append(out, s)
	}
	return out
}

func (r *Runs) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(checkID("session", r.Session))
	add(checkIDs("active", r.Active, maxRunIDs))
	add(checkIDs("paused", r.Paused, maxRunIDs))
	if len(r.Cards) > maxRunCards {
		add(fmt.Errorf("cards has %d cards; a report has at most %d", len(r.Cards), maxRunCards))
	}
	for i := range r.Cards {
		add(r.Cards[i].validate(fmt.Sprintf("cards[%d]", i)))
	}
	return errors.Join(errs...)
}

func (c *RunCard) validate(at string) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(checkID(at+".id", c.ID))
	add(checkNote(at+".name", c.Name))
	if !runStatuses[c.Status] {
		add(fmt.Errorf("%s.status %q is not a run status", at, c.Status))
	}
	if c.Started < 0 || c.Updated < 0 || c.Ended != nil && *c.Ended < 0 || c.Waiting < 0 {
		add(fmt.Errorf("%s has a negative time or count", at))
	}
	if c.StagesDelta {
		if c.EarlierStages != nil {
			add(fmt.Errorf("%s is a delta card and cannot have earlierStages", at))
		}
	} else {
		if len(c.Stages) > maxRunStages {
			add(fmt.Errorf("%s lists %d stages; a full card lists at most %d", at, len(c.Stages), maxRunStages))
		}
		if c.EarlierStages != nil && *c.EarlierStages < 0 {
			add(fmt.Errorf("%s.earlierStages is negative", at))
		}
	}
	for j, s := range c.Stages {
		sat := fmt.Sprintf("%s.stages[%d]", at, j)
		add(checkID(sat+".id", s.ID))
		add(checkNote(sat+".name", s.Name))
		add(checkIDs(sat+".parentIds", s.ParentIDs, maxRunIDs))
		if s.Kind != "" {
			add(checkName(sat+".kind", s.Kind))
		}
		if !stageStatuses[s.Status] {
			add(fmt.Errorf("%s.status %q is not a stage status", sat, s.Status))
		}
		if s.Started != nil && *s.Started < 0 || s.Ended != nil && *s.Ended < 0 {
			add(fmt.Errorf("%s has a negative time", sat))
		}
	}
	return errors.Join(errs...)
}
