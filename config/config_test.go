package config

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// loadTest runs Load with env as the whole environment, a fresh config
// directory holding file as chopin.toml (none if file is ""), and a fresh
// data directory, unless env names others.
func loadTest(t *testing.T, env map[string]string, flags Flags, file string) (Config, error) {
	t.Helper()
	fakeUser(t, &user.User{Username: "ada", Name: "Ada Lovelace,,,"})
	full := map[string]string{
		"CHOPIN_CONFIG_DIR": t.TempDir(),
		"CHOPIN_DATA_DIR":   filepath.Join(t.TempDir(), "data"),
	}
	for k, v := range env {
		full[k] = v
	}
	if file != "" {
		path := filepath.Join(full["CHOPIN_CONFIG_DIR"], "chopin.toml")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Load(flags, func(k string) string { return full[k] })
}

func fakeUser(t *testing.T, u *user.User) {
	t.Helper()
	old := currentUser
	currentUser = func() (*user.User, error) {
		if u == nil {
			return nil, errors.New("no user")
		}
		return u, nil
	}
	t.Cleanup(func() { currentUser = old })
}

// problems returns the lines of a *Error, failing on any other error.
func problems(t *testing.T, err error) []string {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want a *Error", err, err)
	}
	return ce.Problems
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := loadTest(t, nil, Flags{}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		AuthMode:               "local",
		Harness:                "remote",
		Agent:                  true,
		ServerHost:             "127.0.0.1",
		Port:                   8787,
		DataDir:                cfg.DataDir,
		ConfigDir:              cfg.ConfigDir,
		ConfigFile:             filepath.Join(cfg.ConfigDir, "chopin.toml"),
		Login:                  "ada",
		DisplayName:            "Ada Lovelace",
		PlanFile:               "docs/plans/{slug}.md",
		PlannerAttachGrace:     2 * time.Minute,
		DescriptionDebounce:    30 * time.Second,
		HistoryDetailDays:      30,
		HistoryDetailChanges:   10_000,
		HistorySnapshotHours:   24,
		HistorySnapshots:       365,
		AgentPing:              15 * time.Second,
		AgentTimeout:           2 * time.Minute,
		AgentMaxSilence:        15 * time.Minute,
		HandoverPlannerWindow:  10 * time.Second,
		MaxStoredImageBytes:    10 << 20,
		ChatAttachmentMaxBytes: 1 << 20,
		ChatAttachmentMaxTotal: 1 << 20,
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load =\n%+v\nwant\n%+v", cfg, want)
	}
}

func TestConfigDirectoriesFromXDG(t *testing.T) {
	fakeUser(t, &user.User{Username: "ada"})
	env := map[string]string{"XDG_CONFIG_HOME": "/xdg/config", "XDG_DATA_HOME": "/xdg/data"}
	cfg, err := Load(Flags{}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ConfigDir != filepath.FromSlash("/xdg/config/chopin") || cfg.DataDir != filepath.FromSlash("/xdg/data/chopin") {
		t.Errorf("ConfigDir, DataDir = %q, %q; want /xdg/config/chopin, /xdg/data/chopin", cfg.ConfigDir, cfg.DataDir)
	}
}

func TestConfigEnvironment(t *testing.T) {
	cfg, err := loadTest(t, map[string]string{
		"AUTH_MODE":                       "local",
		"HARNESS":                         "remote",
		"AGENT":                           "off",
		"SERVER_HOST":                     "::1",
		"PORT":                            "9000",
		"APP_ORIGIN":                      "http://LOCALHOST:9000/",
		"MODEL":                           "gpt-oss:20b",
		"PLANNER_ATTACH_GRACE_MS":         "0",
		"AGENT_CONNECTION_PING_MS":        "10",
		"AGENT_CONNECTION_TIMEOUT_MS":     "20",
		"AGENT_CONNECTION_MAX_SILENCE_MS": "3600000",
		"HANDOVER_PLANNER_WINDOW_MS":      "0",
		"MAX_STORED_IMAGE_BYTES":          "1024",
		"CHAT_ATTACHMENT_MAX_BYTES":       "1000",
		"CHAT_ATTACHMENT_MAX_TOTAL_BYTES": "1048576",
	}, Flags{}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := []any{cfg.Agent, cfg.ServerHost, cfg.Port, cfg.AppOrigin, cfg.Model,
		cfg.PlannerAttachGrace, cfg.AgentPing, cfg.AgentTimeout, cfg.AgentMaxSilence,
		cfg.HandoverPlannerWindow, cfg.MaxStoredImageBytes, cfg.ChatAttachmentMaxBytes, cfg.ChatAttachmentMaxTotal}
	want := []any{false, "::1", 9000, "http://localhost:9000", "gpt-oss:20b",
		time.Duration(0), 10 * time.Millisecond, 20 * time.Millisecond, time.Hour,
		time.Duration(0), int64(1024), int64(1000), int64(1 << 20)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestConfigRefusesEachInvalidValue(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"AUTH_MODE", "github", `AUTH_MODE=github: not supported; the only supported value is "local"`},
		{"HARNESS", "local", `HARNESS=local: not supported; the only supported value is "remote"`},
		{"AGENT", "maybe", `AGENT=maybe: must be on or off`},
		{"SERVER_HOST", "0.0.0.0", `SERVER_HOST=0.0.0.0: Chopin listens only on this computer (127.0.0.1, ::1 or localhost); it has no sign-in, so anyone who could reach it over the network could read and change your documents`},
		{"SERVER_HOST", "192.168.1.2", `SERVER_HOST=192.168.1.2: Chopin listens only on this computer (127.0.0.1, ::1 or localhost); it has no sign-in, so anyone who could reach it over the network could read and change your documents`},
		{"PORT", "abc", `PORT=abc: must be a port number from 0 to 65535 (0 picks a free port)`},
		{"PORT", "65536", `PORT=65536: must be a port number from 0 to 65535 (0 picks a free port)`},
		{"PORT", "-1", `PORT=-1: must be a port number from 0 to 65535 (0 picks a free port)`},
		{"PORT", "+80", `PORT=+80: must be a port number from 0 to 65535 (0 picks a free port)`},
		{"APP_ORIGIN", "http://127.0.0.1:9999", `APP_ORIGIN=http://127.0.0.1:9999: must be a loopback http or https origin on port 8787, such as http://127.0.0.1:8787`},
		{"APP_ORIGIN", "http://example.com:8787", `APP_ORIGIN=http://example.com:8787: must be a loopback http or https origin on port 8787, such as http://127.0.0.1:8787`},
		{"APP_ORIGIN", "ftp://127.0.0.1:8787", `APP_ORIGIN=ftp://127.0.0.1:8787: must be a loopback http or https origin on port 8787, such as http://127.0.0.1:8787`},
		{"APP_ORIGIN", "http://127.0.0.1:8787/app", `APP_ORIGIN=http://127.0.0.1:8787/app: must be a loopback http or https origin on port 8787, such as http://127.0.0.1:8787`},
		{"MODEL", " gpt", `MODEL= gpt: must be a model name of at most 200 characters, without spaces at either end or control characters`},
		{"PLANNER_ATTACH_GRACE_MS", "abc", `PLANNER_ATTACH_GRACE_MS=abc: must be a whole number of milliseconds from 0 to 3600000`},
		{"PLANNER_ATTACH_GRACE_MS", "3600001", `PLANNER_ATTACH_GRACE_MS=3600001: must be a whole number of milliseconds from 0 to 3600000`},
		{"PLANNER_ATTACH_GRACE_MS", "1.5", `PLANNER_ATTACH_GRACE_MS=1.5: must be a whole number of milliseconds from 0 to 3600000`},
		{"AGENT_CONNECTION_PING_MS", "9", `AGENT_CONNECTION_PING_MS=9: must be a whole number of milliseconds from 10 to 300000`},
		{"AGENT_CONNECTION_PING_MS", "300001", `AGENT_CONNECTION_PING_MS=300001: must be a whole number of milliseconds from 10 to 300000`},
		{"AGENT_CONNECTION_TIMEOUT_MS", "15s", `AGENT_CONNECTION_TIMEOUT_MS=15s: must be a whole number of milliseconds from 10 to 3600000`},
		{"AGENT_CONNECTION_TIMEOUT_MS", "15000", `AGENT_CONNECTION_TIMEOUT_MS=15000: must be longer than the ping interval (AGENT_CONNECTION_PING_MS=15000), or a connection that answers every ping would be dropped between pings`},
		{"AGENT_CONNECTION_MAX_SILENCE_MS", "3600001", `AGENT_CONNECTION_MAX_SILENCE_MS=3600001: must be a whole number of milliseconds from 10 to 3600000`},
		{"AGENT_CONNECTION_MAX_SILENCE_MS", "1000", `AGENT_CONNECTION_MAX_SILENCE_MS=1000: must be longer than the ping interval (AGENT_CONNECTION_PING_MS=15000), or a connection that answers every ping would be dropped between pings`},
		{"HANDOVER_PLANNER_WINDOW_MS", "600001", `HANDOVER_PLANNER_WINDOW_MS=600001: must be a whole number of milliseconds from 0 to 600000`},
		{"MAX_STORED_IMAGE_BYTES", "1023", `MAX_STORED_IMAGE_BYTES=1023: must be a whole number of bytes from 1024 (1 KiB) to 104857600 (100 MiB)`},
		{"MAX_STORED_IMAGE_BYTES", "10MiB", `MAX_STORED_IMAGE_BYTES=10MiB: must be a whole number of bytes from 1024 (1 KiB) to 104857600 (100 MiB)`},
		{"CHAT_ATTACHMENT_MAX_BYTES", "1048577", `CHAT_ATTACHMENT_MAX_BYTES=1048577: must be a whole number of bytes from 1 to 1048576 (1 MiB, the most the agent connection allows)`},
		{"CHAT_ATTACHMENT_MAX_TOTAL_BYTES", "0", `CHAT_ATTACHMENT_MAX_TOTAL_BYTES=0: must be a whole number of bytes from 1 to 1048576 (1 MiB, the most the agent connection allows)`},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			_, err := loadTest(t, map[string]string{tt.name: tt.value}, Flags{}, "")
			got := problems(t, err)
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("problems = %q\nwant [%q]", got, tt.want)
			}
		})
	}
}

func TestConfigReportsEveryProblem(t *testing.T) {
	_, err := loadTest(t, map[string]string{
		"SERVER_HOST":             "0.0.0.0",
		"PORT":                    "http",
		"PLANNER_ATTACH_GRACE_MS": "-5",
	}, Flags{}, "")
	got := problems(t, err)
	if len(got) != 3 {
		t.Fatalf("problems = %q, want 3", got)
	}
	for i, prefix := range []string{"SERVER_HOST=0.0.0.0: ", "PORT=http: ", "PLANNER_ATTACH_GRACE_MS=-5: "} {
		if !strings.HasPrefix(got[i], prefix) {
			t.Errorf("problem %d = %q, want it to start with %q", i, got[i], prefix)
		}
	}
	if err.Error() != strings.Join(got, "\n") {
		t.Errorf("Error() = %q, want the problems one per line", err.Error())
	}
}

func TestConfigAppOriginWithFreePort(t *testing.T) {
	_, err := loadTest(t, map[string]string{"PORT": "0", "APP_ORIGIN": "http://127.0.0.1:9000"}, Flags{}, "")
	want := "APP_ORIGIN=http://127.0.0.1:9000: cannot be set when the port is 0, since the port is not known until Chopin starts"
	if got := problems(t, err); len(got) != 1 || got[0] != want {
		t.Errorf("problems = %q, want [%q]", got, want)
	}
}

func TestConfigPrecedence(t *testing.T) {
	file := "port = 1111\nserver_host = \"localhost\"\nplanner_attach_grace_ms = 5000\nmodel = \"from-file\"\n"
	dataFlag, dataEnv := t.TempDir(), t.TempDir()
	tests := []struct {
		name  string
		env   map[string]string
		flags Flags
		file  string
		port  int
		host  string
		model string
		data  string // "" for the env's
	}{
		{name: "defaults", port: 8787, host: "127.0.0.1"},
		{name: "file over defaults", file: file, port: 1111, host: "localhost", model: "from-file"},
		{name: "environment over file", file: file,
			env:  map[string]string{"PORT": "2222", "SERVER_HOST": "::1", "MODEL": "from-env"},
			port: 2222, host: "::1", model: "from-env"},
		{name: "flags over environment", file: file,
			env:   map[string]string{"PORT": "2222", "SERVER_HOST": "::1", "CHOPIN_DATA_DIR": dataEnv},
			flags: Flags{Port: "3333", Host: "127.0.0.1", DataDir: dataFlag},
			port:  3333, host: "127.0.0.1", model: "from-file", data: dataFlag},
		{name: "empty environment value is unset", file: file,
			env:  map[string]string{"PORT": ""},
			port: 1111, host: "localhost", model: "from-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadTest(t, tt.env, tt.flags, tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Port != tt.port || cfg.ServerHost != tt.host || cfg.Model != tt.model {
				t.Errorf("port, host, model = %d, %q, %q; want %d, %q, %q", cfg.Port, cfg.ServerHost, cfg.Model, tt.port, tt.host, tt.model)
			}
			if tt.data != "" && cfg.DataDir != tt.data {
				t.Errorf("DataDir = %q, want %q", cfg.DataDir, tt.data)
			}
			if tt.file != "" && cfg.PlannerAttachGrace != 5*time.Second {
				t.Errorf("PlannerAttachGrace = %v, want 5s from the file", cfg.PlannerAttachGrace)
			}
		})
	}
}

func TestConfigFlagErrorsNameTheFlag(t *testing.T) {
	_, err := loadTest(t, map[string]string{"PORT": "1"}, Flags{Port: "99999", Host: "0.0.0.0"}, "")
	got := problems(t, err)
	if len(got) != 2 || !strings.HasPrefix(got[0], "--host=0.0.0.0: Chopin listens only on this computer") ||
		got[1] != "--port=99999: must be a port number from 0 to 65535 (0 picks a free port)" {
		t.Errorf("problems = %q", got)
	}
}

func TestConfigFile(t *testing.T) {
	repo := t.TempDir()
	file := `
port = 9001
agent = false
data_dir = "data"
planner_attach_grace_ms = 1000

[account]
login = "grace-h"
name = "Grace Hopper"

[[repository]]
name = "navy/cobol"
path = "` + filepath.ToSlash(repo) + `"

[[repository]]
name = "navy/flow-matic"
`
	cfg, err := loadTest(t, nil, Flags{}, file)
	if err != nil {
		t.Fatal(err)
	}
	// The environment's data directory wins; check the file's on its own.
	if cfg.Port != 9001 || cfg.Agent || cfg.Login != "grace-h" || cfg.DisplayName != "Grace Hopper" {
		t.Errorf("port, agent, login, name = %d, %v, %q, %q", cfg.Port, cfg.Agent, cfg.Login, cfg.DisplayName)
	}
	wantRepos := []Repository{{Name: "navy/cobol", Path: repo}, {Name: "navy/flow-matic"}}
	if !reflect.DeepEqual(cfg.Repositories, wantRepos) {
		t.Errorf("Repositories = %+v, want %+v", cfg.Repositories, wantRepos)
	}

	// data_dir in the file is relative to the file.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "chopin.toml"), []byte(file), 0o600)
	env := map[string]string{"CHOPIN_CONFIG_DIR": dir}
	cfg, err = Load(Flags{}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "data"); cfg.DataDir != want {
		t.Errorf("DataDir = %q, want %q", cfg.DataDir, want)
	}
}

func TestConfigFileProblems(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o600)
	tests := []struct {
		name, file string
		want       []string // with PATH for the file's path
	}{
		{
			name: "unknown keys",
			file: "port = 1\nprot = 2\n[account]\nlogin = \"x\"\nemail = \"x@y\"\n[[repository]]\nname = \"a/b\"\nurl = \"u\"\n",
			want: []string{
				`PATH:2: unknown key "prot"; chopin.toml.example lists every key`,
				`PATH:5: unknown key "account.email"; chopin.toml.example lists every key`,
				`PATH:8: unknown key "repository.url"; chopin.toml.example lists every key`,
			},
		},
		{
			name: "wrong type",
			file: "\nport = \"8787\"\n",
			want: []string{`PATH:2: port must be a whole number, not a string`},
		},
		{
			name: "three problems of different sorts, each on its own line",
			file: "port = \"eighty\"\ncolour = \"blue\"\n\n[account]\nlogin = \"-ada-\"\n",
			want: []string{
				`PATH:1: port must be a whole number, not a string`,
				`PATH:2: unknown key "colour"; chopin.toml.example lists every key`,
				`PATH:5: login = "-ada-": must be a GitHub-style login: 1 to 39 letters, digits or single hyphens, not starting or ending with a hyphen`,
			},
		},
		{
			name: "plan file outside the checkout",
			file: "plan_file = \"../plans/{slug}.md\"\n[[repository]]\nname = \"a/b\"\n",
			want: []string{
				`PATH:1: plan_file = "../plans/{slug}.md": must be a path inside the checkout, with / between folders and no . or .. parts, such as docs/plans/{slug}.md`,
			},
		},
		{
			name: "tables and lists of the wrong shape",
			file: "agent = 1\naccount = \"ada\"\nrepository = \"a/b\"\n",
			want: []string{
				`PATH:1: agent must be true or false, not an integer`,
				`PATH:2: account must be a table ([account]), not a string`,
				`PATH:3: repository must be a list of tables ([[repository]]), not a string`,
			},
		},
		{
			name: "not TOML",
			file: "port = \n",
			want: []string{`PATH:1:8: unexpected character U+000A at start of value`},
		},
		{
			name: "values out of range, each at its line",
			file: "server_host = \"0.0.0.0\"\n\nplanner_attach_grace_ms = 3600001\nauth_mode = \"github\"\n",
			want: []string{
				`PATH:4: auth_mode = "github": not supported; the only supported value is "local"`,
				`PATH:1: server_host = "0.0.0.0": Chopin listens only on this computer (127.0.0.1, ::1 or localhost); it has no sign-in, so anyone who could reach it over the network could read and change your documents`,
				`PATH:3: planner_attach_grace_ms = 3600001: must be a whole number of milliseconds from 0 to 3600000`,
			},
		},
		{
			name: "account",
			file: "[account]\nlogin = \"-ada\"\nname = \"\"\n",
			want: []string{
				`PATH:2: login = "-ada": must be a GitHub-style login: 1 to 39 letters, digits or single hyphens, not starting or ending with a hyphen`,
				`PATH:3: name = "": must be 1 to 100 characters, without spaces at either end or control characters`,
			},
		},
		{
			name: "repositories",
			file: "[[repository]]\nname = \"a/..\"\n[[repository]]\npath = \"/\"\n" +
				"[[repository]]\nname = \"a/b\"\npath = \"/no/such/dir\"\n" +
				"[[repository]]\nname = \"A/B\"\n" +
				"[[repository]]\nname = \"c/d\"\npath = \"" + filepath.ToSlash(notDir) + "\"\n",
			want: []string{
				`PATH:2: name = "a/..": repository name ".." must be 1 to 100 letters, digits, '.', '_' or '-', and not '.' or '..', as website in acme/website`,
				`PATH:3: [[repository]] has no name; give it one, such as name = "owner/name"`,
				`PATH:7: path = "/no/such/dir": no such directory`,
				`PATH:9: name = "A/B": is listed twice`,
				`PATH:12: path = "` + filepath.ToSlash(notDir) + `": is a file, not a directory`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := loadTest(t, map[string]string{"CHOPIN_CONFIG_DIR": dir}, Flags{}, tt.file)
			got := problems(t, err)
			path := filepath.Join(dir, "chopin.toml")
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.ReplaceAll(w, "PATH", path))
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestConfigFileFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.toml")
	os.WriteFile(path, []byte("port = 4444\n"), 0o600)
	cfg, err := loadTest(t, nil, Flags{ConfigFile: path}, "port = 1\n")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 4444 || cfg.ConfigFile != path {
		t.Errorf("Port, ConfigFile = %d, %q; want 4444 from %s", cfg.Port, cfg.ConfigFile, path)
	}

	missing := filepath.Join(t.TempDir(), "missing.toml")
	_, err = loadTest(t, nil, Flags{ConfigFile: missing}, "")
	want := "--config=" + missing + ": no such file"
	if got := problems(t, err); len(got) != 1 || got[0] != want {
		t.Errorf("problems = %q, want [%q]", got, want)
	}
}

// Every key the example documents is one Load knows, and the other
// way round.
func TestConfigExampleListsEveryKey(t *testing.T) {
	b, err := os.ReadFile("../chopin.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	setting := regexp.MustCompile(`^# ([a-z_]+) = `)
	var doc []string
	documented := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "# [[repository]]") {
			break // its example path need not exist here
		}
		if m := setting.FindStringSubmatch(line); m != nil {
			documented[m[1]] = true
			line = strings.TrimPrefix(line, "# ")
		}
		doc = append(doc, line)
	}
	cfg, err := loadTest(t, nil, Flags{}, strings.Join(doc, "\n"))
	if err != nil {
		t.Fatalf("the example with every key uncommented does not load:\n%v", err)
	}
	if cfg.Login != "ada" || cfg.Port != 8787 {
		t.Errorf("login, port = %q, %d", cfg.Login, cfg.Port)
	}
	for _, s := range settings {
		if key := lastKeyPart(s.key); key != "" && !documented[key] {
			t.Errorf("chopin.toml.example does not document %q", key)
		}
	}
}

func TestConfigLoginFromOSUser(t *testing.T) {
	tests := []struct {
		user       *user.User
		login, who string
	}{
		{&user.User{Username: "ada"}, "ada", "ada"},
		{&user.User{Username: "ada", Name: "Ada Lovelace"}, "ada", "Ada Lovelace"},
		{&user.User{Username: `CORP\j.doe`, Name: "Jane Doe"}, "j-doe", "Jane Doe"},
		{&user.User{Username: "___"}, "me", "me"},
		{nil, "me", "me"},
	}
	for _, tt := range tests {
		fakeUser(t, tt.user)
		env := map[string]string{"CHOPIN_CONFIG_DIR": t.TempDir(), "CHOPIN_DATA_DIR": t.TempDir()}
		cfg, err := Load(Flags{}, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Login != tt.login || cfg.DisplayName != tt.who {
			t.Errorf("user %+v: login, name = %q, %q; want %q, %q", tt.user, cfg.Login, cfg.DisplayName, tt.login, tt.who)
		}
	}
}

func TestConfigLoginFromUserName(t *testing.T) {
	tests := map[string]string{
		"ada":                            "ada",
		"Ada":                            "Ada",
		"josé":                           "jose",
		"Zoë_van-der--Berg":              "Zoe-van-der-Berg",
		"-lead-":                         "lead",
		`DOMAIN\alice.smith`:             "alice-smith",
		"李":                              "me",
		"":                               "me",
		strings.Repeat("a", 38) + ".bcd": strings.Repeat("a", 38),
	}
	for in, want := range tests {
		got := LoginFromUserName(in)
		if got != want {
			t.Errorf("LoginFromUserName(%q) = %q, want %q", in, got, want)
		}
		if got != "me" && !validLogin(got) {
			t.Errorf("LoginFromUserName(%q) = %q, not a valid login", in, got)
		}
	}
}
