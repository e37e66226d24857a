package redact

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Credential masking for what Chat stores and shows of a tool call: its
// input, its result and a structured error's message (agent-connection.md,
// "Structured tool errors"), and for what the bundled Planner's checkout
// tools give its model. It never changes what crosses the connection;
// callers apply it on the way into Chat, and the Planner before its model.
//
// The spec names three rules: "credential assignments, including every proxy
// setting such as http_proxy or HTTPS_PROXY, token shapes such as ghp_… and
// Slack xox…- tokens, and URL credentials". Each rule marks byte ranges of the
// original text; overlapping and touching ranges are joined and each becomes
// one [redacted]. Working on the original text keeps one rule from reading
// another's output.

// redacted replaces each masked range: "https://alice:hunter2@host shows
// as https://[redacted]@host".
const redacted = "[redacted]"

// urlWindow bounds the URL rule: "it finds the last at-sign within 8,192
// characters" after the // and "Only that window bounds the scan". An at-sign
// counts when it starts within those characters, so at most 8,191 characters
// lie between. Characters are code points (an invalid byte counts as one):
// the largest of the usual counts, so the widest window, because the rule
// "masks too much rather than too little".
const urlWindow = 8192

// shortUser is the longest user name the URL rule leaves visible. "Only a
// short plain user name with no password, such as git in
// ssh://git@github.com, stays visible": short means at most 16 characters,
// room for the account names URLs carry without a password (git, hg, aur,
// postgres, ec2-user, deploy) but not for the 20 to 40 character keys and
// tokens that services take as a user name (a Sentry key, a GitHub token).
// Plain means written as itself with ASCII letters, digits, '.', '_' and '-'
// only: no colon (so no password), no escape, percent sign, entity, space or
// slash.
const shortUser = 16

// byteRange is a half-open byte range of the text to mask.
type byteRange struct{ start, end int }

// Text returns s with each credential the spec's rules find replaced by
// [redacted]. It returns s itself when nothing is masked.
func Text(s string) string {
	rs := ranges(s)
	if len(rs) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, r := range rs {
		b.WriteString(s[last:r.start])
		b.WriteString(redacted)
		last = r.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// JSON masks a JSON value and returns valid JSON with the same structure:
// the same objects, arrays and keys in the same order, numbers and literals
// as written unless masked.
//
// It reads the value twice. First as the JSON text Chat shows, with the same
// rules as Text, because the spec's scan is bounded only by its window, not
// by quotes: a range that crosses from one string into the next masks the
// end of one and the start of the other, and {"password":"x"} is a
// credential assignment only when key and value are read together. Every
// string the range touches, object keys included, loses the touched part
// (widened to whole escapes, so each string stays valid); a number or literal
// it touches becomes the string "[redacted]". Keys are masked like values
// because Chat shows them too, and a map keyed by URL can hold a password in
// a key; two masked keys can then be equal, which JSON allows. Second, each
// string is masked as the text it decodes to, since that is how Chat shows a
// message ("It masks message as plain text, even when it holds JSON") and a
// line break written \n in JSON is a real line break there.
//
// Input that is not valid JSON is masked as text and returned as a JSON
// string; empty input is returned as it is. It returns raw itself when
// nothing is masked.
func JSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if !json.Valid(raw) {
		return jsonString(Text(string(raw)))
	}
	s := string(raw)
	cur := cursor{rs: ranges(s)}
	var b bytes.Buffer
	changed := false
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '"':
			j := i + 1
			for s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j++
			tok := jsonStringToken(s, i, j, &cur)
			changed = changed || tok != s[i:j]
			b.WriteString(tok)
			i = j
		case c == '{' || c == '}' || c == '[' || c == ']' || c == ',' || c == ':' ||
			c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b.WriteByte(c)
			i++
		default: // a number, true, false or null
			j := i
			for j < len(s) && !strings.ContainsRune("{}[],: \t\n\r", rune(s[j])) {
				j++
			}
			if cur.hits(i, j) {
				b.WriteString(`"` + redacted + `"`)
				changed = true
			} else {
				b.WriteString(s[i:j])
			}
			i = j
		}
	}
	if !changed {
		return raw
	}
	return b.Bytes()
}

// jsonStringToken masks the JSON string token s[i:j], quotes included.
func jsonStringToken(s string, i, j int, cur *cursor) string {
	tok := s[i:j]
	if cur.hits(i+1, j-1) {
		var b strings.Builder
		b.WriteByte('"')
		masking := false
		for u := i + 1; u < j-1; {
			n := 1
			switch {
			case s[u] == '\\' && s[u+1] == 'u':
				n = 6
			case s[u] == '\\':
				n = 2
			default:
				_, n = utf8.DecodeRuneInString(s[u : j-1])
			}
			if cur.hits(u, u+n) {
				if !masking {
					b.WriteString(redacted)
				}
				masking = true
			} else {
				b.WriteString(s[u : u+n])
				masking = false
			}
			u += n
		}
		b.WriteByte('"')
		tok = b.String()
	}
	text := tok[1 : len(tok)-1]
	if strings.IndexByte(text, '\\') >= 0 {
		if err := json.Unmarshal([]byte(tok), &text); err != nil {
			return tok // cannot happen: tok is a valid JSON string
		}
	}
	if masked := Text(text); masked != text {
		return string(jsonString(masked))
	}
	return tok
}

// jsonString encodes s as a JSON string without the HTML escapes
// json.Marshal adds, so unmasked text keeps its characters.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// cursor answers, for byte ranges asked in increasing order, whether
// they overlap a masked range.
type cursor struct {
	rs []byteRange
	k  int
}

func (c *cursor) hits(start, end int) bool {
	for c.k < len(c.rs) && c.rs[c.k].end <= start {
		c.k++
	}
	return c.k < len(c.rs) && c.rs[c.k].start < end
}

// ranges returns what the three rules mask in s, sorted, with overlapping
// and touching ranges joined and empty ones dropped.
func ranges(s string) []byteRange {
	var rs []byteRange
	rs = appendURLCredentials(rs, s)
	rs = appendCredentialAssignments(rs, s)
	rs = appendTokenShapes(rs, s)
	slices.SortFunc(rs, func(a, b byteRange) int { return a.start - b.start })
	out := rs[:0]
	for _, r := range rs {
		if r.end <= r.start {
			continue
		}
		if n := len(out); n > 0 && r.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, r.end)
			continue
		}
		out = append(out, r)
	}
	return out
}

// --- URL credentials ---

// appendURLCredentials: "After any ://, whatever comes before it, and after a
// protocol-relative // that starts the text or follows whitespace, a quote,
// (, <, =, [, a comma or a colon (so not a // inside a path), it finds the
// last at-sign within 8,192 characters and masks everything between them,
// user name included."
//
// It is linear: one pass finds every separator's end and every at-sign's
// start, and a window that only moves forward pairs them. A run of slashes is
// read once, however many of its slashes could start a protocol-relative //.
func appendURLCredentials(rs []byteRange, s string) []byteRange {
	var ends, ats []int
	slashRunEnd := 0 // a // starting before this lies in a run already read
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '@', ':', '/', '\\', '%', '&':
		default:
			continue
		}
		if spelling(s, i, '@') > 0 {
			ats = append(ats, i)
		}
		if n := spelling(s, i, ':'); n > 0 {
			end, count := slashRun(s, i+n)
			if count >= 2 {
				ends = append(ends, end)
			}
			if count > 0 {
				slashRunEnd = max(slashRunEnd, end)
			}
		}
		if i >= slashRunEnd && slash(s, i) > 0 && opensProtocolRelative(s, i) {
			end, count := slashRun(s, i)
			if count >= 2 {
				ends = append(ends, end)
			}
			slashRunEnd = end
		}
	}
	if len(ends) == 0 || len(ats) == 0 {
		return rs
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	// s[from:to] holds chars characters, to as far as the window of the
	// current separator's end reaches; ats[k] is the last at-sign starting
	// at or before to.
	from, to, chars, k := 0, 0, 0, -1
	for _, e := range ends {
		if e >= to {
			to, chars = e, 0
		} else {
			chars -= utf8.RuneCountInString(s[from:e])
		}
		from = e
		for chars < urlWindow-1 && to < len(s) {
			_, n := utf8.DecodeRuneInString(s[to:])
			to += n
			chars++
		}
		for k+1 < len(ats) && ats[k+1] <= to {
			k++
		}
		if k < 0 || ats[k] < e || shortPlainUser(s[e:ats[k]]) {
			continue
		}
		rs = append(rs, byteRange{e, ats[k]})
	}
	return rs
}

// opensProtocolRelative reports whether a // at s[i] is protocol-relative:
// it "starts the text or follows whitespace, a quote, (, <, =, [, a comma or a
// colon". Whitespace is Unicode's, and a quote is any Unicode quotation mark
// or a backtick (Markdown's code quote). Only the colon, slashes and at-sign
// are read in other spellings, so the character before is taken as written.
func opensProtocolRelative(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	switch r {
	case '(', '<', '=', '[', ',', ':', '`':
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Quotation_Mark, r)
}

// slashRun reads the slashes from s[p]: "As URL parsers do, it reads a
// backslash as a slash and lets tabs and line breaks come before each slash".
// Tabs and line breaks are the ones the WHATWG URL parser removes (tab, LF,
// CR), as characters: "a tab or line break written as an escape or entity" is
// a known limit. It returns how many slashes it read and where the last ends.
func slashRun(s string, p int) (end, count int) {
	end = p
	for {
		q := p
		for q < len(s) && (s[q] == '\t' || s[q] == '\n' || s[q] == '\r') {
			q++
		}
		if q >= len(s) {
			return end, count
		}
		n := slash(s, q)
		if n == 0 {
			return end, count
		}
		p = q + n
		end = p
		count++
	}
}

// slash returns the length of a slash or backslash spelled at s[i], or 0.
// At a backslash an escape is tried first: the longer reading never hides a
// slash the shorter one would find, since an escape's second character is a
// letter or digit.
func slash(s string, i int) int {
	if n := spelling(s, i, '/'); n > 0 {
		return n
	}
	return spelling(s, i, '\\')
}

// shortPlainUser reports whether u is a user name the URL rule leaves
// visible; see shortUser.
func shortPlainUser(u string) bool {
	if len(u) == 0 || len(u) > shortUser {
		return false
	}
	for i := 0; i < len(u); i++ {
		if !isAlnum(u[i]) && u[i] != '.' && u[i] != '_' && u[i] != '-' {
			return false
		}
	}
	return true
}

// spelling returns the length of a spelling of the ASCII character c
// (one of : / \ @) that starts at s[i], or 0. "It reads the colon, slashes and
// at-sign in any spelling a URL parser or a later decoding step would accept:
// JSON, JavaScript (\u{40}, %u0040), Python and C (\U00000040, \x40, \100)
// escapes behind any run of backslashes, percent-encoding at any depth (%40,
// %2540, …), and HTML entities with or without their semicolon."
//
// Every position is tried, so an escape behind a run of backslashes is found
// at the run's last backslash, and a masked range ends there. Known limits,
// deliberately not read: a fullwidth at-sign, "a Python named escape such as
// \N{COMMERCIAL AT}", and "percent-encoding of an escape's own characters,
// such as %25%34%30 for %40" (likewise %5Cu0040, &#92;x40, &#37;40).
func spelling(s string, i int, c byte) int {
	switch s[i] {
	case '\\':
		if n := escape(s, i, c); n > 0 {
			return n
		}
		if c == '\\' {
			return 1
		}
	case c:
		return 1
	case '%':
		return percent(s, i, c)
	case '&':
		return entity(s, i, c)
	}
	return 0
}

// escape reads a backslash escape of c at s[i]: \u0040 (JSON, JavaScript,
// Python), \u{40} (JavaScript, with any leading zeros), \U00000040 (Python,
// C), \x40 (Python reads two hex digits, C every hex digit that follows, so
// \x040 too; either reading counts), \x{40} (Perl, Ruby), and \100 (C,
// Python and JavaScript read up to three octal digits).
func escape(s string, i int, c byte) int {
	j := i + 1
	if j+1 >= len(s) {
		return 0
	}
	switch s[j] {
	case 'u', 'x':
		if s[j+1] == '{' {
			n := countDigits(s, j+2, 16, len(s))
			if j+2+n < len(s) && s[j+2+n] == '}' && numberIs(s[j+2:j+2+n], 16, c) {
				return j + 3 + n - i
			}
			return 0
		}
		if s[j] == 'u' {
			if hexIs(s, j+1, 4, c) {
				return 6
			}
			return 0
		}
		if hexIs(s, j+1, 2, c) {
			return 4
		}
		if n := countDigits(s, j+1, 16, len(s)); numberIs(s[j+1:j+1+n], 16, c) {
			return 2 + n
		}
	case 'U':
		if hexIs(s, j+1, 8, c) {
			return 10
		}
	default:
		if n := countDigits(s, j, 8, j+3); numberIs(s[j:j+n], 8, c) {
			return 1 + n
		}
	}
	return 0
}

// percent reads percent-encoding of c at any depth: %40, %2540,
// %252540, …, and JavaScript's %u0040 at any depth (%25u0040).
func percent(s string, i int, c byte) int {
	j := i + 1
	for strings.HasPrefix(s[j:], "25") { // %25 is '%', never c
		j += 2
	}
	switch {
	case hexIs(s, j, 2, c):
		return j + 2 - i
	case j < len(s) && s[j] == 'u' && hexIs(s, j+1, 4, c):
		return j + 5 - i
	}
	return 0
}

// entityNames are the HTML named character references of the characters
// the URL rule reads (&Colon; is ∷, not a colon: names are case-sensitive).
var entityNames = map[byte]string{'@': "commat", ':': "colon", '/': "sol", '\\': "bsol"}

// entity reads an HTML character reference to c, "with or without
// their semicolon": &#64;, &#064;, &#x40;, &#X40;, &commat;. An escaped
// ampersand in front is read too (&amp;#64; decodes to &#64;), the entity
// counterpart of %2540.
func entity(s string, i int, c byte) int {
	j := i + 1
	for strings.HasPrefix(s[j:], "amp") {
		j += 3
		if j < len(s) && s[j] == ';' {
			j++
		}
	}
	if j < len(s) && s[j] == '#' {
		j++
		base := 10
		if j < len(s) && (s[j] == 'x' || s[j] == 'X') {
			base = 16
			j++
		}
		n := countDigits(s, j, base, len(s))
		if !numberIs(s[j:j+n], base, c) {
			return 0
		}
		j += n
	} else {
		name := entityNames[c]
		if !strings.HasPrefix(s[j:], name) {
			return 0
		}
		j += len(name)
	}
	if j < len(s) && s[j] == ';' {
		j++
	}
	return j - i
}

// hexIs reports whether s[p:p+n] is n hex digits whose value is c.
func hexIs(s string, p, n int, c byte) bool {
	return p+n <= len(s) && countDigits(s, p, 16, p+n) == n && numberIs(s[p:p+n], 16, c)
}

// countDigits counts the digits of base from s[p], stopping at limit.
func countDigits(s string, p, base, limit int) int {
	limit = min(limit, len(s))
	n := 0
	for p+n < limit {
		d := s[p+n]
		ok := d >= '0' && d <= '7' ||
			base >= 10 && (d == '8' || d == '9') ||
			base == 16 && (d|0x20 >= 'a' && d|0x20 <= 'f')
		if !ok {
			break
		}
		n++
	}
	return n
}

// numberIs reports whether digits, in base, are the code of c, with any
// number of leading zeros.
func numberIs(digits string, base int, c byte) bool {
	digits = strings.TrimLeft(digits, "0")
	if digits == "" || len(digits) > 3 {
		return false
	}
	v := 0
	for i := 0; i < len(digits); i++ {
		d := int(digits[i] | 0x20) // a digit stays a digit, A-F become a-f
		if d >= 'a' {
			d -= 'a' - 10
		} else {
			d -= '0'
		}
		v = v*base + d
	}
	return v == int(c)
}

// --- credential assignments ---

// keyWords and keySuffixes define a credential assignment's key. A
// key is a run of ASCII letters, digits, '_', '.' and '-', read lowercased
// with '_', '.' and '-' left out (so API_KEY, api-key, apiKey and
// x-api-key all read as ...apikey), from its last 64 characters. It names a
// credential when it contains one of keyWords or ends with one of
// keySuffixes, or contains proxy: "every proxy setting" is every such key,
// http_proxy, HTTPS_PROXY, ALL_PROXY, no_proxy (a proxy setting too, though
// it holds host names), git's http.proxy, npm's https-proxy, Chrome's
// --proxy-server, GIT_PROXY_COMMAND.
var (
	keyWords = []string{
		"password", "passwd", "passphrase", "secret", "credential",
		"apikey", "accesskey", "privatekey", "authorization", "cookie",
	}
	// Suffixes, not words, so that max_tokens, token_count and bypass_list are
	// not keys, while GITHUB_TOKEN, DB_PWD, SMTP_PASS and basic_auth are.
	keySuffixes = []string{"token", "pwd", "pass", "auth"}
)

// keyNames reports whether key names a credential, and whether it names
// a proxy setting.
func keyNames(key string) (credential, proxy bool) {
	var buf [64]byte
	n := len(buf)
	for i := len(key) - 1; i >= 0 && n > 0; i-- {
		c := key[i]
		if c == '_' || c == '.' || c == '-' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		n--
		buf[n] = c
	}
	k := string(buf[n:])
	if k == "pwd" || k == "oldpwd" { // the shell's working directories
		return false, false
	}
	if strings.Contains(k, "proxy") {
		return true, true
	}
	for _, w := range keyWords {
		if strings.Contains(k, w) {
			return true, false
		}
	}
	for _, w := range keySuffixes {
		if strings.HasSuffix(k, w) {
			return true, false
		}
	}
	return false, false
}

// appendCredentialAssignments masks the value of each credential
// assignment: a credential key, then, after optional blanks, = or : (or :=,
// =>), then blanks and a value on the same line. A key in quotes may have its
// closing quote before the operator ("password": "x", \"token\":\"x\"). Not
// assignments: == (a comparison), :: and :// (a scope and a URL's scheme,
// which the URL rule reads). A command-line flag, and a proxy setting named
// like a variable or config key (with '_', '.' or '-' in it), may take its
// value after blanks instead: --password x, --proxy http://p:3128,
// git config http.proxy http://p:3128, ENV HTTPS_PROXY http://p:3128 in a
// Dockerfile ("every proxy setting").
//
// The value is what follows up to where it ends:
//   - in quotes: up to the matching closing quote, escaped quotes skipped, at
//     any depth of backslash-escaping, or the end of the line;
//   - after a quoted key (JSON, a Python dict): a bare scalar, up to
//     whitespace, , ; ) ] or }; an object or array is left to its own keys;
//   - a query parameter (?token=x&y=1): up to &, #, <, > or whitespace;
//   - a value after blanks (a flag's, a proxy setting's): up to whitespace;
//   - otherwise (KEY=value, password: correct horse, Authorization: Bearer x):
//     up to the end of the line, so a value with spaces is masked whole.
//
// A bare value also ends at a quote, which in text almost always closes
// the quotes the assignment was written in (-H 'Authorization: Bearer x',
// "export TOKEN=x", or a JSON string holding it).
//
// It is linear: a key that starts inside a value already masked is skipped.
func appendCredentialAssignments(rs []byteRange, s string) []byteRange {
	scanned := 0
	for i := 0; i < len(s); {
		if !isKeyByte(s[i]) {
			i++
			continue
		}
		start := i
		for i < len(s) && isKeyByte(s[i]) {
			i++
		}
		if start < scanned {
			continue
		}
		if r, next, ok := assignedValue(s, start, i); ok {
			rs = append(rs, r)
			scanned = next
		}
	}
	return rs
}

// assignedValue finds the value assigned to s[start:end] when that is a
// credential key. It returns the range to mask and where its scan stopped.
// The key is tested only once an assignment's shape is found, since that is
// the costlier test and most words are not followed by one.
func assignedValue(s string, start, end int) (byteRange, int, bool) {
	p := end
	quotedKey := false
	if start > 0 && isQuote(s[start-1]) {
		if r := backslashes(s, p); p+r < len(s) && s[p+r] == s[start-1] {
			p += r + 1
			quotedKey = true
		}
	}
	afterKey := p
	p = skipBlanks(s, p)
	flag := false
	switch {
	case p < len(s) && (s[p] == '=' || s[p] == ':'):
		op := s[p]
		p++
		if p < len(s) {
			switch {
			case op == '=' && s[p] == '=', op == ':' && s[p] == ':', op == ':' && strings.HasPrefix(s[p:], "//"):
				return byteRange{}, 0, false
			case s[p] == '=' || s[p] == '>':
				p++
			}
		}
	case p > afterKey && p < len(s) && (s[start] == '-' || strings.ContainsAny(s[start:end], "_.-")):
		flag = true
	default:
		return byteRange{}, 0, false
	}
	credential, proxy := keyNames(s[start:end])
	if !credential || flag && s[start] != '-' && !proxy {
		return byteRange{}, 0, false
	}
	p = skipBlanks(s, p)
	if p >= len(s) || s[p] == '\n' || s[p] == '\r' || flag && s[p] == '-' {
		return byteRange{}, 0, false
	}
	if k := backslashes(s, p); p+k < len(s) && isQuote(s[p+k]) {
		q, from := s[p+k], p+k+1
		for j := from; j < len(s); j++ {
			switch s[j] {
			case '\n', '\r':
				return byteRange{from, j}, j, true
			case q:
				// A quote written with k backslashes, as the opening one
				// was, closes; an escaped one (2k+1) does not. Each escaped
				// backslash before it adds 2(k+1), hence the modulo.
				if r := backslashesBefore(s, from, j); r%(2*(k+1)) == k {
					return byteRange{from, j - k}, j, true
				}
			}
		}
		return byteRange{from, len(s)}, len(s), true
	}
	if quotedKey && (s[p] == '{' || s[p] == '[') {
		return byteRange{}, 0, false
	}
	query := start > 0 && (s[start-1] == '?' || s[start-1] == '&')
	j := p
	for ; j < len(s); j++ {
		c := s[j]
		if c == '\n' || c == '\r' {
			break
		}
		if isQuote(c) {
			return byteRange{p, j - backslashesBefore(s, p, j)}, j, true
		}
		space := c == ' ' || c == '\t'
		if quotedKey && (space || strings.IndexByte(",;)]}", c) >= 0) ||
			query && (space || strings.IndexByte("&#<>", c) >= 0) ||
			flag && space {
			break
		}
	}
	return byteRange{p, j}, j, true
}

func isKeyByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '.' || c == '-'
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

func skipBlanks(s string, p int) int {
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	return p
}

// backslashes counts the backslashes from s[p].
func backslashes(s string, p int) int {
	n := 0
	for p+n < len(s) && s[p+n] == '\\' {
		n++
	}
	return n
}

// backslashesBefore counts the backslashes right before s[j], back to from.
func backslashesBefore(s string, from, j int) int {
	n := 0
	for j-n-1 >= from && s[j-n-1] == '\\' {
		n++
	}
	return n
}

// --- token shapes ---

// tokenPrefixes start the token shapes masked whole, prefix included:
// GitHub's (ghp_ and the others of its family, github_pat_), Chopin's own
// agent token and Planner credential (chopin_a_, chopin_p_, which the spec
// and design define), and a few other widely used ones with an unmistakable
// prefix. Slack's xox…- tokens are matched apart in appendTokenShapes.
var tokenPrefixes = []string{
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"chopin_a_", "chopin_p_",
	"glpat-", "sk-ant-", "sk-proj-",
}

// appendTokenShapes masks "token shapes such as ghp_… and Slack xox…-
// tokens": a prefix that does not follow a letter or digit, then at least
// one of the characters tokens are made of (ASCII letters, digits, '_' and
// '-'). A Slack token is xox, then up to 16 letters, digits or dots (xoxb,
// xoxp, xoxe.xoxp), then '-' and token characters.
func appendTokenShapes(rs []byteRange, s string) []byteRange {
	for i := 0; i < len(s); i++ {
		// Every prefix starts with one of these pairs; most text has none.
		if i+1 >= len(s) {
			break
		}
		switch s[i : i+2] {
		case "gh", "gi", "ch", "gl", "sk", "xo":
		default:
			continue
		}
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		body := -1
		for _, p := range tokenPrefixes {
			if strings.HasPrefix(s[i:], p) {
				body = i + len(p)
				break
			}
		}
		if body < 0 && strings.HasPrefix(s[i:], "xox") {
			j := i + 3
			for j < len(s) && j-i < 3+16 && (isAlnum(s[j]) || s[j] == '.') {
				j++
			}
			if j < len(s) && s[j] == '-' {
				body = j + 1
			}
		}
		if body < 0 {
			continue
		}
		j := body
		for j < len(s) && (isAlnum(s[j]) || s[j] == '_' || s[j] == '-') {
			j++
		}
		if j > body {
			rs = append(rs, byteRange{i, j})
			i = j - 1
		}
	}
	return rs
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}
