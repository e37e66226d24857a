package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Every example the spec gives, each way it spells a URL's separators, the
// known limits, the pathological inputs a careless scanner takes quadratic
// time on, a fuzzer that hides a password in random spellings, and the
// benchmarks docs/performance.md reports.

type textCase struct{ name, in, want string }

func runCases(t *testing.T, cases []textCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Text(c.in); got != c.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", show(c.in), show(got), show(c.want))
			}
		})
	}
}

// show shortens a long text for a failure message.
func show(s string) string {
	if len(s) <= 300 {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)…%s", s[:100], len(s), s[len(s)-100:])
}

// unmasked is a case the masking must leave as it is.
func unmasked(name, in string) textCase { return textCase{name, in, in} }

// TestTextSpec holds every example the spec gives.
func TestTextSpec(t *testing.T) {
	runCases(t, []textCase{
		{"example", "https://alice:hunter2@host", "https://[redacted]@host"},
		{"backslashes as slashes", `https:\\alice:hunter2@host`, `https:\\[redacted]@host`},
		unmasked("short plain user name", "ssh://git@github.com"),
		{"password holding ://", "https://alice:hun://ter2@host", "https://[redacted]@host"},
		{"later at-sign", "https://example.com/a then mail bob@example.com", "https://[redacted]@example.com"},
		{"later URL", "see https://example.com or ssh://git@github.com", "see https://[redacted]@github.com"},
		{"whatever comes before ://", "x-custom+v2://alice:hunter2@host", "x-custom+v2://[redacted]@host"},
		{"nothing before ://", "://alice:hunter2@host", "://[redacted]@host"},
		{"spaces quotes and line breaks do not end the scan", "\"https://alice\" and\n'hunter2@host'", "\"https://[redacted]@host'"},
		{"slashes do not end the scan", "https://alice/x/y:pw@host", "https://[redacted]@host"},
		{"later schemes do not end the scan", "https://alice ftp://bob:pw@host", "https://[redacted]@host"},
		{"http_proxy", "http_proxy=http://proxy.corp:3128", "http_proxy=[redacted]"},
		{"HTTPS_PROXY", "HTTPS_PROXY=http://alice:hunter2@proxy.corp", "HTTPS_PROXY=[redacted]"},
		{"ghp_ token", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a in use", "token [redacted] in use"},
		{"Slack token", "posting with xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "posting with [redacted]"},
		{"code-shaped text", "no-repository-credential", "no-repository-credential"},
	})
}

// TestTextAtSign spells the at-sign in each way the spec reads.
// The masked range ends where the at-sign's spelling starts; behind a run of
// backslashes that is the run's last backslash.
func TestTextAtSign(t *testing.T) {
	for _, at := range []struct{ name, in, kept string }{
		{"literal", "@", "@"},
		{"JSON", `\u0040`, `\u0040`},
		{"JSON behind 2 backslashes", `\\u0040`, `\u0040`},
		{"JSON behind 4 backslashes", `\\\\u0040`, `\u0040`},
		{"JSON uppercase hex", `\u004A`, ""}, // J, not an at-sign
		{"JavaScript braces", `\u{40}`, `\u{40}`},
		{"JavaScript braces with zeros", `\u{00040}`, `\u{00040}`},
		{"JavaScript percent-u", `%u0040`, `%u0040`},
		{"JavaScript percent-u at depth 1", `%25u0040`, `%25u0040`},
		{"Python 8 digits", `\U00000040`, `\U00000040`},
		{"Python hex", `\x40`, `\x40`},
		{"Python hex behind 3 backslashes", `\\\x40`, `\x40`},
		{"C hex with more digits", `\x0040`, `\x0040`},
		{"Perl hex braces", `\x{40}`, `\x{40}`},
		{"C octal", `\100`, `\100`},
		{"C octal behind 2 backslashes", `\\100`, `\100`},
		{"percent", "%40", "%40"},
		{"percent depth 1", "%2540", "%2540"},
		{"percent depth 2", "%252540", "%252540"},
		{"percent depth 3", "%25252540", "%25252540"},
		{"decimal entity", "&#64;", "&#64;"},
		{"decimal entity without semicolon", "&#64", "&#64"},
		{"decimal entity with zeros", "&#0064;", "&#0064;"},
		{"hex entity", "&#x40;", "&#x40;"},
		{"hex entity without semicolon", "&#x40", "&#x40"},
		{"hex entity uppercase X", "&#X40;", "&#X40;"},
		{"named entity", "&commat;", "&commat;"},
		{"named entity without semicolon", "&commat", "&commat"},
		{"escaped entity", "&amp;#64;", "&amp;#64;"},
		{"escaped named entity", "&amp;commat;", "&amp;commat;"},
	} {
		t.Run(at.name, func(t *testing.T) {
			in := "https://alice:hunter2" + at.in + "host"
			want := "https://[redacted]" + at.kept + "host"
			if at.kept == "" {
				want = in
			}
			if got := Text(in); got != want {
				t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
			}
		})
	}
}

// TestTextSeparator spells the colon and slashes of :// in each
// way the spec reads.
func TestTextSeparator(t *testing.T) {
	for _, sep := range []struct{ name, sep string }{
		{"percent colon", "%3A//"},
		{"percent colon lowercase", "%3a//"},
		{"percent colon depth 1", "%253A//"},
		{"percent colon depth 2", "%25253A//"},
		{"percent colon depth 3", "%2525253A//"},
		{"JSON colon", `\u003a//`},
		{"JSON colon behind 2 backslashes", `\\u003A//`},
		{"JavaScript colon", `\u{3a}//`},
		{"JavaScript percent-u colon", `%u003A//`},
		{"Python colon", `\x3a//`},
		{"Python 8-digit colon", `\U0000003a//`},
		{"octal colon", `\072//`},
		{"decimal entity colon", "&#58;//"},
		{"decimal entity colon without semicolon", "&#58//"},
		{"hex entity colon", "&#x3a;//"},
		{"named entity colon", "&colon;//"},
		{"named entity colon without semicolon", "&colon//"},
		{"percent slashes", ":%2F%2F"},
		{"percent slashes depth 1", ":%252F%252f"},
		{"percent slashes depth 2", ":%25252F%25252F"},
		{"percent slashes depth 3", ":%2525252F%2525252F"},
		{"JSON slashes", `:\u002f\u002F`},
		{"JSON escaped slashes", `:\/\/`},
		{"JavaScript slashes", `:\u{2f}\u{02f}`},
		{"JavaScript percent-u slashes", `:%u002F%u002f`},
		{"Python slashes", `:\x2f\x2f`},
		{"Python 8-digit slashes", `:\U0000002f\U0000002F`},
		{"octal slashes", `:\057\057`},
		{"decimal entity slashes", ":&#47;&#47;"},
		{"decimal entity slashes without semicolon", ":&#47&#47"},
		{"hex entity slashes", ":&#x2f;&#X2F;"},
		{"named entity slashes", ":&sol;&sol;"},
		{"named entity slashes without semicolon", ":&sol&sol"},
		{"backslashes", `:\\`},
		{"slash and backslash", `:/\`},
		{"percent backslashes", ":%5C%5c"},
		{"escaped backslashes", `:\x5c\u005c`},
		{"octal backslashes", `:\134\134`},
		{"entity backslashes", ":&bsol;&#92;"},
		{"everything encoded", "&colon;%252F\\u002f"},
		{"tab before the first slash", ":\t//"},
		{"line break before each slash", ":\n/\n/"},
		{"CR LF before the second slash", ":/\r\n/"},
		{"tabs before encoded slashes", ":\t\t%2F\t&sol;"},
		{"three slashes", ":///"},
	} {
		t.Run(sep.name, func(t *testing.T) {
			in := "https" + sep.sep + "alice:hunter2@host"
			want := "https" + sep.sep + "[redacted]@host"
			if got := Text(in); got != want {
				t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
			}
		})
	}
}

// TestTextProtocolRelative: a // that "starts the text or follows
// whitespace, a quote, (, <, =, [, a comma or a colon (so not a // inside a
// path)".
func TestTextProtocolRelative(t *testing.T) {
	for _, before := range []string{
		"", " ", "\t", "\n", "\u00a0", "\u3000", `"`, "'", "`", "\u201c", "«",
		"(", "<", "=", "[", ",", ":",
	} {
		for _, slashes := range []string{"//", `\\`, "%2F%2F", "/\t/"} {
			in := "x" + before + slashes + "alice:hunter2@host"
			if before == "" {
				in = slashes + "alice:hunter2@host"
			}
			want := strings.TrimSuffix(in, "alice:hunter2@host") + "[redacted]@host"
			if got := Text(in); got != want {
				t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
			}
		}
	}
	for _, in := range []string{
		"a//alice:hunter2@host",
		"/srv//alice:hunter2@host",
		"x.//alice:hunter2@host",
		"x)//alice:hunter2@host",
		"x;//alice:hunter2@host",
		"x]//alice:hunter2@host",
		"x-//alice:hunter2@host",
		"x&quot;//alice:hunter2@host", // the character before is taken as written
		"x /alice:hunter2@host",       // one slash
	} {
		if got := Text(in); got != in {
			t.Errorf("Text(%q) = %q, want it unchanged", in, got)
		}
	}
}

// TestTextWindow: "it finds the last at-sign within 8,192
// characters": one starting at the 8,192nd character counts, one after it
// does not. Characters are code points, not bytes.
func TestTextWindow(t *testing.T) {
	runCases(t, []textCase{
		{"8191 between", "https://" + strings.Repeat("a", 8191) + "@host", "https://[redacted]@host"},
		unmasked("8192 between", "https://"+strings.Repeat("a", 8192)+"@host"),
		{"8191 two-byte characters between", "https://" + strings.Repeat("é", 8191) + "@host", "https://[redacted]@host"},
		unmasked("8192 two-byte characters between", "https://"+strings.Repeat("é", 8192)+"@host"),
		{"encoded at-sign starting at the 8192nd", "https://" + strings.Repeat("a", 8191) + "%40host", "https://[redacted]%40host"},
		{"last at-sign inside the window", "https://a@b" + strings.Repeat("c", 8188) + "@d" + strings.Repeat("e", 10) + "@f",
			"https://[redacted]@d" + strings.Repeat("e", 10) + "@f"},
		{"a later separator has its own window",
			"https://a:b@c " + strings.Repeat("x", 9000) + " https://d:e@f",
			"https://[redacted]@c " + strings.Repeat("x", 9000) + " https://[redacted]@f"},
	})
}

// TestTextShortUser: "Only a short plain user name with no
// password ... stays visible."
func TestTextShortUser(t *testing.T) {
	runCases(t, []textCase{
		unmasked("git", "ssh://git@github.com:owner/repo.git"),
		unmasked("hg", "ssh://hg@bitbucket.org/owner/repo"),
		unmasked("with a dash", "ssh://ec2-user@host"),
		unmasked("with a dot and an underscore", "postgres://app_user.v2@db/app"),
		unmasked("16 characters", "ssh://abcdefghijklmnop@host"),
		unmasked("no user name", "https://@host"),
		{"17 characters", "ssh://abcdefghijklmnopq@host", "ssh://[redacted]@host"},
		{"empty password", "https://alice:@host", "https://[redacted]@host"},
		{"password only", "https://:hunter2@host", "https://[redacted]@host"},
		{"encoded colon", "https://alice%3Ahunter2@host", "https://[redacted]@host"},
		{"escaped character", `https://alic\x65@host`, "https://[redacted]@host"},
		{"space", "https://a b@host", "https://[redacted]@host"},
		{"a key as the user name", "https://d41d8cd98f00b204e9800998ecf8427e@o1.ingest.sentry.io/1", "https://[redacted]@o1.ingest.sentry.io/1"},
		{"a later at-sign joins it", "ssh://git@github.com wrote to bob@example.com", "ssh://[redacted]@example.com"},
	})
}

// TestTextKnownLimits are the spec's "Known limits", deliberately
// not masked, each in a form no other rule reads.
func TestTextKnownLimits(t *testing.T) {
	runCases(t, []textCase{
		unmasked("fullwidth at-sign", "https://alice:hunter2＠host"),
		unmasked("zero-width space between the slashes", "https:/\u200b/alice:hunter2@host"),
		unmasked("zero-width joiner after the colon", "https:\u200d//alice:hunter2@host"),
		unmasked("soft hyphen between the slashes", "https:/\u00ad/alice:hunter2@host"),
		unmasked("word joiner after the colon", "https:\u2060//alice:hunter2@host"),
		unmasked("line break as a JSON escape", `https:\n//alice:hunter2@host`),
		unmasked("tab as a JSON escape", `https:\t//alice:hunter2@host`),
		unmasked("line break percent-encoded", "https:%0A//alice:hunter2@host"),
		unmasked("line break as an entity", "https:&#10;//alice:hunter2@host"),
		unmasked("tab as a named entity", "https:&Tab;//alice:hunter2@host"),
		unmasked("tab percent-encoded between the slashes", "https:/%09/alice:hunter2@host"),
		unmasked("Python named escape", `https://alice:hunter2\N{COMMERCIAL AT}host`),
		unmasked("percent-encoded percent-encoding", "https://alice:hunter2%25%34%30host"),
		unmasked("percent-encoded escape", "https://alice:hunter2%5Cu0040host"),
	})
}

func TestTextAssignments(t *testing.T) {
	runCases(t, []textCase{
		{"password=", "password=hunter2", "password=[redacted]"},
		{"blanks around =", "PASSWORD = hunter2", "PASSWORD = [redacted]"},
		{"quoted value", `DB_PASSWORD="hunter 2" next`, `DB_PASSWORD="[redacted]" next`},
		{"single-quoted value", `secret='hunter2'`, `secret='[redacted]'`},
		{"token:", "token: abc123", "token: [redacted]"},
		{"API_KEY quoted", `API_KEY="sk-123"`, `API_KEY="[redacted]"`},
		{"api-key header", "x-api-key: abc123", "x-api-key: [redacted]"},
		{"camelCase", `apiKey := "abc123"`, `apiKey := "[redacted]"`},
		{"Authorization Bearer", "> Authorization: Bearer abc.def.ghi\n> Accept: */*", "> Authorization: [redacted]\n> Accept: */*"},
		{"Authorization in a curl command", `curl -H 'Authorization: Bearer abc' https://x`, `curl -H 'Authorization: [redacted]' https://x`},
		{"Proxy-Authorization", "Proxy-Authorization: Basic YWxpY2U6aHVudGVyMg==", "Proxy-Authorization: [redacted]"},
		{"Cookie", "Cookie: session=abc; theme=dark", "Cookie: [redacted]"},
		{"value with spaces to the end of the line", "password: correct horse battery\nuser: bob", "password: [redacted]\nuser: bob"},
		{"export", "export GITHUB_TOKEN=abc123 # mine", "export GITHUB_TOKEN=[redacted]"},
		{"quoted assignment", `run "export GITHUB_TOKEN=abc123" now`, `run "export GITHUB_TOKEN=[redacted]" now`},
		{"contains password", "PGPASSWORD=pw psql", "PGPASSWORD=[redacted]"},
		{"pass suffix", "SMTP_PASS=pw", "SMTP_PASS=[redacted]"},
		{"pwd suffix", "db_pwd: pw", "db_pwd: [redacted]"},
		{"auth suffix", "basic_auth=alice:pw", "basic_auth=[redacted]"},
		{"client secret", "client_secret=abc", "client_secret=[redacted]"},
		{"AWS", "AWS_SECRET_ACCESS_KEY=abc\nAWS_REGION=eu-west-1", "AWS_SECRET_ACCESS_KEY=[redacted]\nAWS_REGION=eu-west-1"},
		{"private key", "private_key: abc", "private_key: [redacted]"},
		{"query parameter", "GET /api?access_token=abc&page=2 HTTP/1.1", "GET /api?access_token=[redacted]&page=2 HTTP/1.1"},
		{"flag with =", "gh --token=abc repo", "gh --token=[redacted]"},
		{"flag with a blank", "mysql --password hunter2 --user bob", "mysql --password [redacted] --user bob"},
		{"fat arrow", `['password' => 'hunter2']`, `['password' => '[redacted]']`},
		{"JSON", `{"password": "hunter2", "user": "bob"}`, `{"password": "[redacted]", "user": "bob"}`},
		{"JSON compact", `{"token":"abc","n":1}`, `{"token":"[redacted]","n":1}`},
		{"JSON escaped quote in the value", `{"password":"a\"b","n":1}`, `{"password":"[redacted]","n":1}`},
		{"JSON scalar", `{"token": 12345, "n": 1}`, `{"token": [redacted], "n": 1}`},
		{"JSON in a JSON string", `"{\"password\":\"hun\\\"ter2\",\"n\":1}"`, `"{\"password\":\"[redacted]\",\"n\":1}"`},
		{"unclosed quote", `password="hunter2` + "\nnext", `password="[redacted]` + "\nnext"},
		{"YAML", "db:\n  password: hunter2\n  host: db", "db:\n  password: [redacted]\n  host: db"},
		unmasked("empty value", "password=\nuser=bob"),
		unmasked("empty quoted value", `password="" user=bob`),
		unmasked("comparison", `if password == "" {`),
		unmasked("not a key: max_tokens", "max_tokens: 4096"),
		unmasked("not a key: token_count", "token_count=12"),
		unmasked("not a key: PWD", "PWD=/home/alice\nOLDPWD=/tmp"),
		unmasked("not a key: pass inside a word", "bypass_list: a"),
		unmasked("no operator", "the password is wrong"),
		unmasked("object value", `{"token":{"type":"bearer"}}`),
	})
}

// TestTextProxySettings: "every proxy setting such as http_proxy
// or HTTPS_PROXY", NO_PROXY included.
func TestTextProxySettings(t *testing.T) {
	runCases(t, []textCase{
		{"http_proxy", "http_proxy=http://proxy:3128", "http_proxy=[redacted]"},
		{"HTTPS_PROXY quoted", `HTTPS_PROXY="http://proxy:3128"`, `HTTPS_PROXY="[redacted]"`},
		{"ALL_PROXY", "ALL_PROXY=socks5h://proxy:1080", "ALL_PROXY=[redacted]"},
		{"no_proxy", "no_proxy=localhost,127.0.0.1", "no_proxy=[redacted]"},
		{"NO_PROXY", "NO_PROXY: .corp", "NO_PROXY: [redacted]"},
		{"ftp_proxy", "export ftp_proxy=http://p:21", "export ftp_proxy=[redacted]"},
		{"PowerShell", `$env:HTTPS_PROXY = "http://p:3128"`, `$env:HTTPS_PROXY = "[redacted]"`},
		{"git config list", "http.proxy=http://p:3128\nuser.name=Alice", "http.proxy=[redacted]\nuser.name=Alice"},
		{"git config set", "git config --global http.proxy http://p:3128 && echo ok", "git config --global http.proxy [redacted] && echo ok"},
		{"Dockerfile ENV", "ENV HTTPS_PROXY http://p:3128\nRUN make", "ENV HTTPS_PROXY [redacted]\nRUN make"},
		{"npm", "https-proxy=http://p:3128", "https-proxy=[redacted]"},
		{"Chrome flag", "chrome --proxy-server=socks5://p:1080 --headless", "chrome --proxy-server=[redacted]"},
		{"flag with a blank", "curl --proxy http://p:3128 https://x", "curl --proxy [redacted] https://x"},
		{"JSON", `{"httpsProxy":"http://p:3128"}`, `{"httpsProxy":"[redacted]"}`},
		unmasked("the word in a sentence", "the proxy refused it"),
	})
}

func TestTextTokenShapes(t *testing.T) {
	runCases(t, []textCase{
		{"ghp_", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "[redacted]"},
		{"gho_", "use gho_16C7e42F292c6912E7710c838347Ae178B4a.", "use [redacted]."},
		{"ghu_", "(ghu_abc)", "([redacted])"},
		{"ghs_", `"ghs_abc"`, `"[redacted]"`},
		{"ghr_", "ghr_abc", "[redacted]"},
		{"github_pat_", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[redacted]"},
		{"Slack bot", "xoxb-1234-5678-abcd", "[redacted]"},
		{"Slack user", "xoxp-1234-5678-abcd", "[redacted]"},
		{"Slack rotating", "xoxe.xoxp-1-Mi0yLTEyMzQ", "[redacted]"},
		{"Slack refresh", "xoxe-1-My0xLTEyMzQ", "[redacted]"},
		{"Chopin agent token", "chopin_a_" + strings.Repeat("A", 43), "[redacted]"},
		{"Chopin Planner credential", "chopin_p_" + strings.Repeat("b-_", 14) + "c", "[redacted]"},
		{"GitLab", "glpat-abcdefghij0123456789", "[redacted]"},
		{"Anthropic", "sk-ant-api03-abc_def", "[redacted]"},
		{"in a URL path", "https://x/ghp_abc/y", "https://x/[redacted]/y"},
		unmasked("prefix alone", "tokens start with ghp_ or github_pat_"),
		unmasked("prefix inside a word", "aghp_abc xgithub_pat_abc"),
		unmasked("Slack prefix without dash", "xoxb"),
	})
}

func TestJSON(t *testing.T) {
	for _, c := range []textCase{
		{"string value", `{"url":"https://alice:hunter2@host"}`, `{"url":"https://[redacted]@host"}`},
		{"assignment across key and value", `{"password":"hunter2","n":1}`, `{"password":"[redacted]","n":1}`},
		{"nested", `{"env":{"GITHUB_TOKEN":"abc","HOME":"/h"}}`, `{"env":{"GITHUB_TOKEN":"[redacted]","HOME":"/h"}}`},
		{"number", `{"token": 12345}`, `{"token": "[redacted]"}`},
		{"literal", `{"auth":true}`, `{"auth":"[redacted]"}`},
		{"across strings", `["https://alice","hunter2@host"]`, `["https://[redacted]","[redacted]@host"]`},
		{"across keys", `{"a":"https://alice","hunter2@h":1}`, `{"a":"https://[redacted]","[redacted]@h":1}`},
		{"key", `{"https://alice:pw@host":1}`, `{"https://[redacted]@host":1}`},
		{"escaped at-sign", `{"u":"https://alice:pw\u0040host"}`, `{"u":"https://[redacted]\u0040host"}`},
		{"range ends inside an escape", `{"u":"https://alice\\u0040host"}`, `{"u":"https://[redacted]u0040host"}`},
		{"decoded line break before the slashes", `{"m":"<b>https:\n//alice:pw@host</b>"}`, `{"m":"<b>https:\n//[redacted]@host</b>"}`},
		{"string holding JSON", `{"message":"{\"token\":\"abc\"}"}`, `{"message":"{\"token\":\"[redacted]\"}"}`},
		{"pretty", "{\n  \"token\": \"abc\",\n  \"n\": [1, 2]\n}", "{\n  \"token\": \"[redacted]\",\n  \"n\": [1, 2]\n}"},
		unmasked("nothing to mask", `{"a":[1,2.5e3,-0,true,null,"x"]}`),
		unmasked("short user name", `{"remote":"ssh://git@github.com/o/r"}`),
		{"not JSON", `password=hunter2 "`, `"password=[redacted]\""`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := JSON(json.RawMessage(c.in))
			if string(got) != c.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
			if !json.Valid(got) {
				t.Errorf("JSON(%s) = %s, not valid JSON", c.in, got)
			}
		})
	}
	if got := JSON(nil); got != nil {
		t.Errorf("JSON(nil) = %q, want nil", got)
	}
}

// pathological are inputs built to make a careless scanner quadratic,
// each about 2n bytes, with what the masking must make of them.
func pathological(n int) []textCase {
	return []textCase{
		{"slashes", strings.Repeat("//", n) + "alice:pw@host", strings.Repeat("//", n) + "[redacted]@host"},
		unmasked("spaced slashes", strings.Repeat(" //", n)),
		unmasked("at-signs", strings.Repeat("@", 2*n)),
		{"separators and at-signs", strings.Repeat("://@", n/2), "://[redacted]@"},
		{"tab slashes", strings.Repeat("\t/", n) + "x:pw@y", strings.Repeat("\t/", n) + "[redacted]@y"},
		{"backslashes", strings.Repeat(`\`, 2*n) + "x:pw@y", strings.Repeat(`\`, 2*n) + "[redacted]@y"},
		unmasked("colons and tabs", strings.Repeat(":\t\t\t", n/2)),
		unmasked("percent depth", "https://x%"+strings.Repeat("25", n)),
		unmasked("percents", strings.Repeat("%25", n)),
		unmasked("entity depth", "&"+strings.Repeat("amp;", n/2)),
		unmasked("entity zeros", "&#"+strings.Repeat("0", 2*n)),
		unmasked("hex escape digits", `\x`+strings.Repeat("0", 2*n)),
		{"assignments", strings.Repeat("password=", n/4), "password=[redacted]"},
		{"quoted assignments", strings.Repeat(`password="`, n/4), strings.Repeat(`password="[redacted]"`, n/8)},
		unmasked("long key", strings.Repeat("a", 2*n)+"="),
		{"tokens", strings.Repeat("ghp_", n/2), "[redacted]"},
	}
}

func TestTextPathological(t *testing.T) {
	runCases(t, pathological(1<<15))
}

// FuzzText builds scheme://user:secret@host with the separator
// and the at-sign in random spellings, between random text, and checks the
// secret never shows. Any input must also mask without panicking and give
// valid JSON from JSON.
func FuzzText(f *testing.F) {
	f.Add("see ", " done", uint64(0), "hunter2")
	f.Add(`{"a":"`, `"}`, uint64(0x123456789), "s3cr3tPass")
	f.Add("", "", uint64(1<<63-1), "x")
	f.Add("\\", "@", uint64(0xdeadbeef), "pw")
	f.Fuzz(func(t *testing.T, before, after string, choice uint64, secret string) {
		_ = Text(before)
		if before != "" && !json.Valid(JSON(json.RawMessage(before))) {
			t.Fatalf("JSON(%q) is not valid JSON", before)
		}
		secret = fuzzSecret(secret)
		pick := func(options []string) string {
			o := options[choice%uint64(len(options))]
			choice /= uint64(len(options))
			return o
		}
		var url string
		if pick([]string{"scheme", "protocol-relative"}) == "scheme" {
			url = pick([]string{"https", "ssh", "x"}) + fuzzSpelling(':', pick)
		} else {
			url = pick([]string{" ", "\n", `"`, "'", "(", "<", "=", "[", ","})
		}
		url += pick(fuzzBlanks) + fuzzSpelling('/', pick) + pick(fuzzBlanks) + fuzzSpelling('/', pick)
		url += pick([]string{"user", "x-access-token", "oauth2", "token"}) + ":" + secret +
			fuzzSpelling('@', pick) + "host.example"
		in := before + url + after
		if strings.Count(in, secret) != 1 {
			t.Skip("the secret also appears around the URL")
		}
		if out := Text(in); strings.Contains(out, secret) {
			t.Fatalf("Text(%q) = %q shows the secret %q", in, out, secret)
		}
	})
}

var fuzzBlanks = []string{"", "", "\t", "\n", "\r\n", "\t\n"}

// fuzzSecret makes a password of 6 or more letters and digits.
func fuzzSecret(s string) string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("Zq9")
	for i := 0; i < len(s) && len(b) < 40; i++ {
		b = append(b, alnum[int(s[i])%len(alnum)])
	}
	for len(b) < 6 {
		b = append(b, 'k')
	}
	return string(b)
}

// fuzzSpelling spells c in one of the ways the spec reads. The
// characters after each spelling (a letter past f, or another spelling)
// never extend it into a different character.
func fuzzSpelling(c byte, pick func([]string) string) string {
	hex := fmt.Sprintf("%02x", c)
	upper := strings.ToUpper(hex)
	names := map[byte]string{'@': "commat", ':': "colon", '/': "sol"}
	spellings := []string{
		string(c),
		`\u00` + hex, `\u00` + upper, `\u{` + hex + `}`, `\u{000` + hex + `}`, `%u00` + upper,
		`\U000000` + hex, `\x` + hex, `\x00` + hex, `\x{` + hex + `}`, fmt.Sprintf(`\%03o`, c),
		"&#" + fmt.Sprint(c) + ";", "&#0" + fmt.Sprint(c), "&#x" + hex + ";", "&#X" + upper,
		"&" + names[c] + ";", "&" + names[c], "&amp;#" + fmt.Sprint(c) + ";",
	}
	for depth := 0; depth <= 3; depth++ {
		spellings = append(spellings, "%"+strings.Repeat("25", depth)+upper)
	}
	if c == '/' {
		spellings = append(spellings, `\`, `%5C`, `&bsol;`, `\x5c`, `\134`)
	}
	s := pick(spellings)
	if s[0] == '\\' {
		s = pick([]string{"", `\`, `\\\`}) + s
	}
	return s
}

// benchToolResult is a 64 KiB tool result of the usual kind: command
// output with paths, URLs, JSON and a few credentials.
func benchToolResult() string {
	lines := []string{
		"$ git remote -v",
		"origin\thttps://github.com/chopin-desktop/chopin.git (fetch)",
		"upstream\tssh://git@github.com/chopin/chopin.git (push)",
		"2025-01-02T03:04:05Z INFO request method=GET path=/api/v1/documents/42 status=200 duration=12ms",
		`{"id":42,"title":"Plan: move the store to SQLite","labels":["store","db"],"url":"https://example.com/d/42"}`,
		"export DATABASE_URL=postgres://app:s3cret@db.internal:5432/app",
		"HTTPS_PROXY=http://proxy.corp:3128",
		"  src/room/mask.go:120:4: warning: unused variable x // see https://go.dev/ref/spec#Blank_identifier",
		"Authorization: Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"The quick brown fox jumps over the lazy dog; contact bob@example.com for help.",
	}
	var b strings.Builder
	for b.Len() < 64<<10 {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()[:64<<10]
}

// BenchmarkText runs a 64 KiB tool result, then each
// pathological input at 64 KiB and at 256 KiB: linear work shows as the same
// MB/s at both sizes, quadratic work as a quarter.
func BenchmarkText(b *testing.B) {
	b.Run("tool result 64KiB", func(b *testing.B) { benchText(b, benchToolResult()) })
	for _, size := range []int{64, 256} {
		for _, c := range pathological(size << 9) {
			b.Run(fmt.Sprintf("%s %dKiB", c.name, size), func(b *testing.B) { benchText(b, c.in) })
		}
	}
}

func benchText(b *testing.B, in string) {
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		Text(in)
	}
}

func BenchmarkJSON(b *testing.B) {
	raw, err := json.Marshal(map[string]any{"output": benchToolResult(), "exitCode": 0})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		JSON(raw)
	}
}
