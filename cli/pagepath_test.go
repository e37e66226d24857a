package cli

import "testing"

// chopin open PAGE makes a launch link whose next is PAGE's path: never
// one a browser could read as another host, however it is spelled.
func TestPagePathStaysOnChopin(t *testing.T) {
	for arg, want := range map[string]string{
		"":                                      "",
		"/documents/octo/plans/launch":          "/documents/octo/plans/launch",
		"/documents/octo/plans/launch?x=1#crew": "/documents/octo/plans/launch?x=1#crew",
		"http://127.0.0.1:8787/documents/octo/plans/launch?x=1":  "/documents/octo/plans/launch?x=1",
		"http://127.0.0.1:8787/documents/octo/plans/launch#crew": "/documents/octo/plans/launch#crew",
		"http://127.0.0.1:8787":                                  "/",
		"/documents/octo/plans/a%2Fb":                            "/documents/octo/plans/a%2Fb",
	} {
		if got, err := pagePath(arg); err != nil || got != want {
			t.Errorf("pagePath(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, arg := range []string{
		"///evil.example/x",
		"//evil.example/x",
		"////evil.example/x",
		"/%2F%2Fevil.example/x",
		"/%2f/evil.example/x",
		"/%252F%252Fevil.example/x",
		"/.//evil.example/x",
		"/a/..//evil.example/x",
		"/%2e%2e//evil.example/x",
		"/\\evil.example/x",
		"/%5Cevil.example/x",
		"/%255Cevil.example/x",
		"/\t/evil.example/x",
		"/%09/evil.example/x",
		"/\n/evil.example/x",
		"/%0A/evil.example/x",
		"http://127.0.0.1:8787//evil.example/x",
		"http://127.0.0.1:8787/%2F%2Fevil.example/x",
		"javascript:alert(1)",
		"evil.example/x",
		"documents/octo",
	} {
		if got, err := pagePath(arg); err == nil {
			t.Errorf("pagePath(%q) = %q, want an error", arg, got)
		}
	}
}
