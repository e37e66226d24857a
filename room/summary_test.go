package room

import (
	"strings"
	"testing"
)

func TestChangeSummary(t *testing.T) {
	plan := "# Launch\n\nIntro.\n\n## Goals\n\nShip it.\n\nKeep it small.\n\n## Risks\n\nNone known.\n"
	for _, tc := range []struct{ name, after, want string }{
		{"same", plan, "no change"},
		{"one changed",
			strings.Replace(plan, "Ship it.", "Ship it soon.", 1),
			"changed 1 block, under “Goals”"},
		{"added under another heading",
			strings.Replace(plan, "None known.\n", "None known.\n\nThe date may slip.\n", 1),
			"added 1 block, under “Risks”"},
		{"removed: the heading it was under",
			strings.Replace(plan, "Keep it small.\n\n", "", 1),
			"removed 1 block, under “Goals”"},
		{"changed, added and removed in two sections",
			strings.Replace(strings.Replace(strings.Replace(plan, "Ship it.", "Ship it now.", 1),
				"None known.\n", "None known.\n\nA new one.\n\nAnd another.\n", 1), "Intro.\n\n", "", 1),
			"changed 1 block, added 2 and removed 1, under “Launch”, “Goals” and “Risks”"},
		{"blank lines only", strings.Replace(plan, "Intro.\n\n", "Intro.\n\n\n", 1), "changed blank lines only"},
		{"no heading", "New text.\n", "changed 1 block and removed 6"},
	} {
		if got := ChangeSummary(plan, tc.after); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestChangeSummaryNamesAtMostThreeHeadings(t *testing.T) {
	var before, after strings.Builder
	for _, h := range []string{"A", "B", "C", "D", "E"} {
		before.WriteString("## " + h + "\n\nOld.\n\n")
		after.WriteString("## " + h + "\n\nNew.\n\n")
	}
	want := "changed 5 blocks, under “A”, “B”, “C” and 2 more"
	if got := ChangeSummary(before.String(), after.String()); got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
