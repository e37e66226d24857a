package textrule

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEncoding(t *testing.T) {
	for _, c := range []struct {
		in     string
		offset int // -1: taken
	}{
		{"", -1}, {"plain", -1}, {"Ünïcödé ✓ 𝄞", -1}, {"\x00 is UTF-8", -1}, {"\uFFFD as sent", -1},
		{"bad \xff\xfe", 4}, {"cut \xc3", 4}, {"\xed\xa0\x80 surrogate", 0}, {"over\xf4\x90\x80\x80long", 4},
	} {
		err := Encoding([]byte(c.in))
		var p *Problem
		switch {
		case c.offset < 0 && err != nil:
			t.Errorf("%q refused: %v", c.in, err)
		case c.offset >= 0 && (!errors.As(err, &p) || p.Offset != c.offset || p.Rune != utf8.RuneError):
			t.Errorf("%q: %#v, want a problem at byte %d", c.in, err, c.offset)
		}
	}
}

func TestText(t *testing.T) {
	for _, ok := range []string{"", "# Plan\n\n\tindented\n", "Ünïcödé ✓", "\u200b zero width is text", "\u0085 C1 is text"} {
		if err := Text(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, c := range []struct {
		in     string
		offset int
		what   string
	}{
		{"nul\x00here", 3, "U+0000 (NUL)"},
		{"bell\a", 4, "U+0007 (BEL)"},
		{"line\r\nend", 4, "U+000D (CR)"},
		{"é\x1b[31m", 2, "U+001B (ESC)"},
		{"del\x7f", 3, "U+007F (DEL)"},
		{"bad \xff", 4, "not valid UTF-8"},
	} {
		err := Text(c.in)
		var p *Problem
		if !errors.As(err, &p) || p.Offset != c.offset || !strings.Contains(p.Error(), c.what) {
			t.Errorf("%q: %v, want %q at byte %d", c.in, err, c.what, c.offset)
		}
	}
}

func TestTitle(t *testing.T) {
	for _, ok := range []string{"Launch plan", "Ünïcödé plan ✓", "zero\u200bwidth inside", "日本語", "\u200b\u200bA"} {
		if err := Title(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"\u200b", "\u200b\u200c\u200d\u2060\ufeff", "\u00ad", "\u3164", "\u115f\u1160", "\ufe0f", "\u2800",
		"\u3000\u200b", "\U000e0041", "\u034f",
	} {
		if err := Title(bad); err == nil || !strings.Contains(err.Error(), "no visible character") {
			t.Errorf("%q (invisible only): %v", bad, err)
		}
	}
	for _, bad := range []string{"nul\x00", "two\nlines", "tab\there", "right\u202eleft", "iso\u2066late\u2069", "c1\u0085", "mark\u200e", "bad \xff"} {
		if err := Title(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

func TestJSON(t *testing.T) {
	for _, ok := range []string{
		`{"a":"plain"}`, `{"a":"\u00e9\ud83d\ude00"}`, `{"a":"\\ud800 is text"}`, `{"a":"\\\ud83d\ude00"}`, `{"a":"\uD83D\uDE00"}`,
		`{"a":"\"\\"}`, `{"a":"\u0000"}`, `"\ud7ff\ue000"`,
	} {
		if err := JSON([]byte(ok)); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, c := range []struct {
		in     string
		offset int
	}{
		{`{"a":"\ud800"}`, 6}, {`{"a":"\udc00\ud800"}`, 6}, {`{"a":"x\ud83d"}`, 7}, {`{"a":"\ud83d\u0041"}`, 6},
		{`{"a":"\\\ud800"}`, 8}, {`{"a":"\ud83d\ude00\ud83d"}`, 18}, {"{\"a\":\"\xff\"}", 6},
	} {
		var p *Problem
		if err := JSON([]byte(c.in)); !errors.As(err, &p) || p.Offset != c.offset {
			t.Errorf("%s: %v, want a problem at byte %d", c.in, err, c.offset)
		}
	}
}

// The checks run over every frame and body before it is decoded: their
// cost per byte, on a keystroke's push and on a frame at the 2 MiB limit
// of text with escapes and many-byte characters.
func BenchmarkJSON(b *testing.B) {
	push := []byte(`{"type":"plan:push","id":"p7","version":14,"updates":[{"clientID":"k3x9","changes":[7,[0,"","Hello 👋"]]}]}`)
	unit := `{"a":"Ünïcödé \"quoted\" \\ \ud83d\ude80 text, plain text, more plain text"},`
	big := []byte("[" + strings.Repeat(unit, 2<<20/len(unit)) + "{}]")
	for _, c := range []struct {
		name string
		data []byte
	}{{"push", push}, {"2MiB", big}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if err := JSON(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		// What a door does anyway, for scale: json.Valid reads every byte
		// once, as the decoder that follows does.
		b.Run(c.name+"/json.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if !json.Valid(c.data) {
					b.Fatal("not JSON")
				}
			}
		})
	}
}

func BenchmarkText(b *testing.B) {
	plan := strings.Repeat("# Plan\n\nUse SQLite for everything, and keep backups daily. Ünïcödé ✓\n\n", 3000)
	b.SetBytes(int64(len(plan)))
	for b.Loop() {
		if err := Text(plan); err != nil {
			b.Fatal(err)
		}
	}
}
