package room

import (
	"slices"
	"testing"
)

// TestTableTransformerAsGoldmarks: table.go's copy of goldmark's table
// paragraph transformer splits every kind of table paragraph as the
// original does.
func TestTableTransformerAsGoldmarks(t *testing.T) {
	for _, source := range []string{
		"| a | b |\n| --- | --- |\n| 1 | 2 |\n",
		"a | b\n--- | ---\n1 | 2\n",
		"| a | b |\n|:--|--:|\n|:-:|---|\n",
		"| a | b | c |\n| :-: | --: | :-- |\n| 1 |\n| 1 | 2 | 3 | 4 |\n",
		"text before\nmore text\n| a | b |\n| --- | --- |\n| 1 | 2 |\nafter\n",
		"| a | b |\n| --- |\n| 1 | 2 |\n",
		"| a |\n| --- | --- |\n",
		"| `a\\|b` | c \\| d |\n| --- | --- |\n| `x\\|y` | z |\n",
		"| a | b |\n| - | - |\n\n| c |\n| - |\n",
		"    | a | b |\n    | --- | --- |\n",
		"| a | b |\n    | --- | --- |\n",
		"| a | b |\n   | --- | --- |\n",
		"- | a | b |\n  | --- | --- |\n  | 1 | 2 |\n",
		"> | a | b |\n> | --- | --- |\n> | 1 | 2 |\n",
		"| a | b |\n| --- | --- |\n| 1 | 2 |\n| --- | --- |\n| 3 | 4 |\n",
		"a\n---\n",
		"a\n-|-\n",
		"|\n|-|\n",
		"| a | b |\n| :-: | :--: |\n",
		"| a | b |\n| -: | -:- |\n",
		"| é | 👋 |\n| --- | --- |\n| ü | x |\n",
	} {
		got, want := parseBlocks(source), referenceBlocks(source)
		if !slices.Equal(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", source, shapes(got), shapes(want))
		}
	}
}
