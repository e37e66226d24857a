package room

import (
	"fmt"
	"strings"
)

// ChangeSummary says in a few words what turned before into after, block by
// block: how many blocks were changed, added and removed, and under which
// headings, for the Chat line that tells a person someone else replaced
// the plan ("changed 2 blocks and added 1, under “Goals” and “Risks”").
// Blocks are matched by their text, as the outline's digests give them,
// with the same bounded comparison the change sets use, so the time it
// takes grows with the plans' lengths and no faster.
func ChangeSummary(before, after string) string {
	if before == after {
		return "no change"
	}
	bb, ab := Blocks(before), Blocks(after)
	_, hunks := blockHunks(bb, ab)

	var changed, added, removed int
	var sections []string
	seen := map[string]bool{}
	// Each text's headings, found once when first needed: headingAbove
	// for each block would split a text into lines again every time the
	// two texts take turns (BlockSource keeps only the last one's).
	var headA, headB []string
	name := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			sections = append(sections, s)
		}
	}
	for _, h := range hunks {
		na, nb := h.a1-h.a0, h.b1-h.b0
		changed += min(na, nb)
		added += max(nb-na, 0)
		removed += max(na-nb, 0)
		for i := h.b0; i < h.b1; i++ {
			if headB == nil {
				headB = textHeadings(after, ab)
			}
			name(headB[i])
		}
		for i := h.a0; i < h.a1 && nb == 0; i++ {
			if headA == nil {
				headA = textHeadings(before, bb)
			}
			name(headA[i]) // a removal: the heading it was under
		}
	}

	var parts []string
	if changed > 0 {
		parts = append(parts, fmt.Sprintf("changed %s", blocksCount(changed)))
	}
	if added > 0 {
		parts = append(parts, fmt.Sprintf("added %s", blocksCountAfter(added, len(parts) > 0)))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("removed %s", blocksCountAfter(removed, len(parts) > 0)))
	}
	if len(parts) == 0 {
		return "changed blank lines only"
	}
	summary := joinAnd(parts)
	if len(sections) > 0 {
		quoted := make([]string, 0, summaryNamed)
		for _, s := range sections[:min(len(sections), summaryNamed)] {
			quoted = append(quoted, "“"+ClipLine(s, askedHeading)+"”")
		}
		if more := len(sections) - len(quoted); more > 0 {
			quoted = append(quoted, fmt.Sprintf("%d more", more))
		}
		summary += ", under " + joinAnd(quoted)
	}
	return summary
}

// summaryNamed is how many headings a change summary names.
const summaryNamed = 3

// headingAbove is the text of the heading block i is or is under, or "".
func headingAbove(text string, blocks []Block, i int) string {
	for ; i >= 0; i-- {
		if blocks[i].Type == BlockHeading {
			line := BlockSource(text, blocks[i])
			if nl := strings.IndexByte(line, '\n'); nl >= 0 {
				line = line[:nl] // a setext heading's text is its first line
			}
			return strings.TrimSpace(strings.TrimRight(strings.TrimLeft(line, "# "), "# "))
		}
	}
	return ""
}

// blocksCount is "1 block" or "n blocks".
func blocksCount(n int) string {
	if n == 1 {
		return "1 block"
	}
	return fmt.Sprintf("%d blocks", n)
}

// blocksCountAfter is blocksCount, or the bare number after another count
// has named the unit ("changed 2 blocks and added 1").
func blocksCountAfter(n int, named bool) string {
	if named {
		return fmt.Sprint(n)
	}
	return blocksCount(n)
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
