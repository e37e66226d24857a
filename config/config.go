package config

// Loading the configuration (DESIGN.md section 4): Load resolves every
// row of the settings table from flags, the environment, chopin.toml and
// defaults, checks each value, and reports every problem in one line that
// names where the value came from. It also reads chopin.toml, refusing
// unknown keys at their line, and its [[repository]] tables.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/adrg/xdg"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"golang.org/x/text/unicode/norm"

	"github.com/chopin-desktop/chopin/ident"
)

// Config is the whole configuration of one Chopin process. It is built by
// Load from flags, environment, chopin.toml and defaults, in that order
// of precedence, and validated before anything starts. A field's comment
// names the setting that fills it.
type Config struct {
	AuthMode string // AUTH_MODE
	Harness  string // HARNESS
	Agent    bool   // AGENT: false makes /api/v1/agent answer 404

	ServerHost string // SERVER_HOST
	Port       int    // PORT: 0 picks a free port (tests)
	// AppOrigin is APP_ORIGIN as configured, normalised to scheme://host:port,
	// or empty when it was not set: the origin is then http://<host>:<port> of
	// the address the server actually bound (App.URL), which differs from
	// ServerHost and Port when Port is 0 or the port was taken.
	AppOrigin string

	DataDir   string // CHOPIN_DATA_DIR: holds chopin.db, the instance lock; absolute
	ConfigDir string // CHOPIN_CONFIG_DIR: chopin.toml and the agent token; absolute
	// ConfigFile is the chopin.toml that was read, or would have been read
	// had it existed. Only for messages.
	ConfigFile string

	Login       string // [account] login
	DisplayName string // [account] name

	Model string // MODEL: sent as a turn's model when set

	PlanFile string // PLAN_FILE: where a plan is saved in its checkout, with {slug}; relative, "/"-separated

	// A plan's history: every change for HistoryDetailDays days (at most
	// HistoryDetailChanges of them), then one snapshot per
	// HistorySnapshotHours, at most HistorySnapshots.
	HistoryDetailDays    int // HISTORY_DETAIL_DAYS
	HistoryDetailChanges int // HISTORY_DETAIL_CHANGES
	HistorySnapshotHours int // HISTORY_SNAPSHOT_HOURS
	HistorySnapshots     int // HISTORY_SNAPSHOTS

	PlannerAttachGrace    time.Duration // PLANNER_ATTACH_GRACE_MS
	DescriptionDebounce   time.Duration // DESCRIPTION_DEBOUNCE_MS
	AgentPing             time.Duration // AGENT_CONNECTION_PING_MS
	AgentTimeout          time.Duration // AGENT_CONNECTION_TIMEOUT_MS
	AgentMaxSilence       time.Duration // AGENT_CONNECTION_MAX_SILENCE_MS
	HandoverPlannerWindow time.Duration // HANDOVER_PLANNER_WINDOW_MS
	// AgentAnswerTimeout is how long the agent connection waits for stop and
	// resume answers. Not a setting: tests shorten it; zero is agentconn's
	// default.
	AgentAnswerTimeout time.Duration
	// JobBackoff is the wait before a failed job's next attempt. Not a
	// setting: tests shorten it; zero is the jobs package's default.
	JobBackoff             time.Duration
	MaxStoredImageBytes    int64 // MAX_STORED_IMAGE_BYTES
	ChatAttachmentMaxBytes int64 // CHAT_ATTACHMENT_MAX_BYTES
	ChatAttachmentMaxTotal int64 // CHAT_ATTACHMENT_MAX_TOTAL_BYTES

	// Repositories listed in the config file ([[repository]] name, path).
	Repositories []Repository
	// Agents are the ACP agents chopin planner --acp NAME knows besides its
	// presets ([[acp_agent]] name, command).
	Agents []Agent
}

// Agent is an ACP agent named in the config file.
type Agent struct {
	Name    string
	Command []string // its command line: the program, then its arguments
}

// Repository is a repository registered through the config file.
type Repository struct {
	Name string // owner/name
	Path string // optional local checkout; absolute, an existing directory
}

// Flags are the global command-line flags, the settings that have a flag.
// An empty field was not given.
// Port is kept as text so that it is validated, and its failure reported,
// exactly like PORT.
type Flags struct {
	ConfigFile string // --config
	DataDir    string // --data-dir
	Host       string // --host
	Port       string // --port
}

// Error lists every problem Load found, one line each, so a person
// can fix them all at once instead of one per start.
type Error struct {
	Problems []string
}

func (e *Error) Error() string { return strings.Join(e.Problems, "\n") }

// currentUser is the OS account the login and display name default to.
// A variable so tests can pretend to be someone else.
var currentUser = user.Current

// Load builds the configuration from flags, then the environment (read
// through getenv; an empty value counts as unset), then chopin.toml, then
// defaults, and validates all of it. When anything is wrong it returns a
// *Error listing every problem; the Config is then unusable.
//
// The config file is flags.ConfigFile, or chopin.toml in the config directory
// (CHOPIN_CONFIG_DIR, else $XDG_CONFIG_HOME/chopin); only a file named by
// --config must exist. Load reads and checks but creates nothing.
func Load(flags Flags, getenv func(string) string) (Config, error) {
	r := &resolver{flags: flags, getenv: getenv}
	var cfg Config
	// The settings chopin.toml cannot hold say where it is.
	for i := range settings {
		if s := &settings[i]; s.key == "" && s.apply != nil {
			r.load(s, &cfg)
		}
	}
	r.readFile(cfg.ConfigFile, flags.ConfigFile != "")
	for i := range settings {
		if s := &settings[i]; s.key != "" {
			r.load(s, &cfg)
		}
	}
	cfg.Repositories = r.repositories()
	cfg.Agents = r.agents()

	if len(r.problems) > 0 {
		return Config{}, &Error{Problems: r.problems}
	}
	return cfg, nil
}

// resolver carries what Load reads and the problems it has found so far.
type resolver struct {
	flags      Flags
	getenv     func(string) string
	fileValues map[string]any // chopin.toml's values by key ("port", "account.login")
	fileRepos  []fileRepository
	fileAgents []fileAgent
	path       string         // the config file, for messages
	lines      map[string]int // key path ("port", "account.login", "repository.1.name") -> line
	ping       resolved       // envPing, once resolved
	problems   []string
}

func (r *resolver) problemf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// load resolves one setting and stores it in cfg.
func (r *resolver) load(s *setting, cfg *Config) {
	v := r.resolve(s)
	if s.env == envPing {
		r.ping = v
	}
	// A client that answers every ping must never be dropped for it.
	if s.abovePing && r.ping.ok && v.ok && v.number <= r.ping.number {
		r.problemf("%s: must be longer than the ping interval (%s), or a connection that answers every ping would be dropped between pings", v.label, r.ping.label)
	}
	s.apply(r, cfg, v)
}

// resolve finds a setting's value: its flag if given, else its environment
// variable, else its key in chopin.toml, else its default; and refuses a
// value its kind does not allow.
func (r *resolver) resolve(s *setting) resolved {
	var given, label string
	if s.flagValue != nil && *s.flagValue(&r.flags) != "" {
		given = *s.flagValue(&r.flags)
		label = "--" + s.flag + "=" + given
	} else if s.env != "" && r.getenv(s.env) != "" {
		given = r.getenv(s.env)
		label = s.env + "=" + given
	}
	v := resolved{text: s.defText, on: s.defOn, number: s.defNumber, label: label, ok: true, set: true}
	if label != "" {
		r.parse(s, &v, given)
	} else if fv, ok := r.fileValues[s.key]; ok {
		v.label, v.fromFile = r.fileLabel(s.key, fv), true
		r.check(s, &v, fv)
	} else {
		v.set = false
		v.label = s.env + "=" + s.defText
		if s.kind == numberSetting {
			v.label = fmt.Sprintf("%s=%d", s.env, s.defNumber)
		}
		return v
	}
	if s.kind == onlySetting && v.text != s.defText {
		r.problemf("%s: not supported; the only supported value is %q", v.label, s.defText)
		v.text, v.ok = s.defText, false
	}
	return v
}

// parse reads a value given as text, by a flag or the environment.
func (r *resolver) parse(s *setting, v *resolved, text string) {
	switch s.kind {
	case switchSetting:
		switch strings.ToLower(text) {
		case "on", "true", "1":
			v.on = true
		case "off", "false", "0":
			v.on = false
		default:
			r.problemf("%s: must be on or off", v.label)
			v.ok = false
		}
	case numberSetting:
		// Only plain decimal digits: no sign, no spaces, no "10s" or "1e3".
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n < s.min || n > s.max || strings.TrimLeft(text, "0123456789") != "" {
			r.problemf("%s: must be %s", v.label, s.want())
			v.ok = false
			return
		}
		v.number = n
	default:
		v.text = text
	}
}

// check reads a value from chopin.toml, already of its key's TOML type.
func (r *resolver) check(s *setting, v *resolved, value any) {
	switch value := value.(type) {
	case bool:
		v.on = value
	case int64:
		if value < s.min || value > s.max {
			r.problemf("%s: must be %s", v.label, s.want())
			v.ok = false
			return
		}
		v.number = value
	case string:
		v.text = value
	}
}

// fileLabel names a key of the config file at its line.
func (r *resolver) fileLabel(key string, value any) string {
	return fmt.Sprintf("%s: %s = %s", r.at(key), lastKeyPart(key), tomlValue(value))
}

// at is "path:line" for a key of the config file, or just the path when the
// line is unknown.
func (r *resolver) at(key string) string {
	for k := key; k != ""; {
		if line, ok := r.lines[k]; ok {
			return fmt.Sprintf("%s:%d", r.path, line)
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return r.path
}

func lastKeyPart(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		return key[i+1:]
	}
	return key
}

func tomlValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// configDir resolves CHOPIN_CONFIG_DIR.
func (r *resolver) configDir(v resolved) string {
	if !v.set {
		return r.xdgDir("XDG_CONFIG_HOME", xdg.ConfigHome)
	}
	return r.abs(v.label, v.text)
}

// configFile resolves --config: chopin.toml in dir unless named.
func (r *resolver) configFile(v resolved, dir string) string {
	if !v.set {
		return filepath.Join(dir, "chopin.toml")
	}
	return r.abs(v.label, v.text)
}

// loopbackHost accepts only names of this computer: Chopin has no sign-in,
// so whoever can reach it can read and change every document.
func (r *resolver) loopbackHost(s resolved) string {
	host := strings.TrimSuffix(strings.TrimPrefix(s.text, "["), "]")
	switch strings.ToLower(host) {
	case "127.0.0.1", "::1", "localhost":
		return strings.ToLower(host)
	}
	r.problemf("%s: Chopin listens only on this computer (127.0.0.1, ::1 or localhost); it has no sign-in, so anyone who could reach it over the network could read and change your documents", s.label)
	return "127.0.0.1"
}

// IsLoopbackName reports whether host (without brackets) names this computer.
func IsLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// appOrigin checks APP_ORIGIN and returns it as scheme://host:port.
func (r *resolver) appOrigin(s resolved, port int) string {
	if !s.set {
		return ""
	}
	if port == 0 {
		r.problemf("%s: cannot be set when the port is 0, since the port is not known until Chopin starts", s.label)
		return ""
	}
	want := fmt.Sprintf("must be a loopback http or https origin on port %d, such as http://127.0.0.1:%d", port, port)
	u, err := url.Parse(s.text)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		r.problemf("%s: %s", s.label, want)
		return ""
	}
	host, p := u.Hostname(), u.Port()
	if p == "" {
		p = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if !IsLoopbackName(host) || p != strconv.Itoa(port) {
		r.problemf("%s: %s", s.label, want)
		return ""
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(host), p)
}

// dataDir resolves CHOPIN_DATA_DIR, which may not exist yet.
func (r *resolver) dataDir(s resolved) string {
	if !s.set {
		return r.xdgDir("XDG_DATA_HOME", xdg.DataHome)
	}
	path := s.text
	if s.fromFile {
		if path == "" {
			r.problemf("%s: must name a directory; leave data_dir out for the default", s.label)
			return ""
		}
		path = r.filePath(path)
	}
	dir := r.abs(s.label, path)
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		r.problemf("%s: is a file, not a directory", s.label)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.problemf("%s: cannot be used: %v", s.label, err)
	}
	return dir
}

// xdgDir is <base>/chopin, where base is the XDG variable xdgEnv read
// through getenv, or fallback (the xdg package's platform default).
func (r *resolver) xdgDir(xdgEnv, fallback string) string {
	base := fallback
	if v := r.getenv(xdgEnv); v != "" && filepath.IsAbs(v) {
		base = v // the XDG spec says a relative value is to be ignored
	}
	return filepath.Join(base, "chopin")
}

func (r *resolver) abs(label, path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		r.problemf("%s: cannot be made an absolute path: %v", label, err)
		return path
	}
	return p
}

// filePath reads a path written in the config file: ~ is the home directory
// and a relative path is relative to the file's own directory.
func (r *resolver) filePath(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if p != "" && !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(r.path), p)
	}
	return p
}

func (r *resolver) model(s resolved) string {
	if !s.set {
		return ""
	}
	if len([]rune(s.text)) > maxModelLength || strings.TrimSpace(s.text) != s.text || hasControl(s.text) {
		r.problemf("%s: must be a model name of at most %d characters, without spaces at either end or control characters", s.label, maxModelLength)
		return ""
	}
	return s.text
}

// planFile checks PLAN_FILE: a path inside a checkout, naming the document
// with {slug}.
func (r *resolver) planFile(s resolved) string {
	p := s.text
	clean := path.Clean(p)
	switch {
	case !strings.Contains(p, "{slug}"):
		r.problemf("%s: must contain {slug}, which becomes the document's slug, so documents do not overwrite each other", s.label)
	case strings.Contains(p, "\\") || path.IsAbs(p) || filepath.IsAbs(p) || clean == ".." || strings.HasPrefix(clean, "../") || clean != p || hasControl(p):
		r.problemf("%s: must be a path inside the checkout, with / between folders and no . or .. parts, such as docs/plans/{slug}.md", s.label)
	case slices.ContainsFunc(strings.Split(clean, "/"), func(part string) bool { return strings.EqualFold(part, ".git") }):
		r.problemf("%s: must not be inside .git", s.label)
	default:
		return p
	}
	return s.text
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// loginPattern is a GitHub login: letters, digits and single hyphens, neither
// starting nor ending with a hyphen, at most 39 characters.
var loginPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$`) })

func validLogin(s string) bool { return len(s) <= 39 && loginPattern().MatchString(s) }

// login resolves the local account's login.
func (r *resolver) login(s resolved) string {
	login := "me"
	if u, err := currentUser(); err == nil {
		login = LoginFromUserName(u.Username)
	}
	if !s.set {
		return login
	}
	if !validLogin(s.text) {
		r.problemf("%s: must be a GitHub-style login: 1 to 39 letters, digits or single hyphens, not starting or ending with a hyphen", s.label)
		return login
	}
	return s.text
}

// displayName resolves the local account's display name: the file's, else
// the OS account's full name, else the login.
func (r *resolver) displayName(s resolved, login string) string {
	if s.set {
		n := s.text
		if n == "" || strings.TrimSpace(n) != n || hasControl(n) || len([]rune(n)) > maxDisplayNameLength {
			r.problemf("%s: must be 1 to %d characters, without spaces at either end or control characters", s.label, maxDisplayNameLength)
		}
		return n
	}
	if u, err := currentUser(); err == nil {
		// On Unix, Name is the GECOS field: "Full Name,room,phone,...".
		osName, _, _ := strings.Cut(u.Name, ",")
		osName = strings.TrimSpace(osName)
		if osName != "" && !hasControl(osName) && len([]rune(osName)) <= maxDisplayNameLength {
			return osName
		}
	}
	return login
}

// LoginFromUserName reduces an operating-system user name to a GitHub-style
// login: accents are dropped ("José" gives "Jose"), a domain prefix
// ("CORP\jose") is dropped, every run of other characters becomes one hyphen,
// and the result is at most 39 characters. A name with nothing left gives "me".
func LoginFromUserName(username string) string {
	if i := strings.LastIndexByte(username, '\\'); i >= 0 {
		username = username[i+1:]
	}
	var b strings.Builder
	hyphen := false
	for _, c := range norm.NFD.String(username) {
		switch {
		case unicode.Is(unicode.Mn, c):
			// an accent split off its letter by NFD
		case c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(c)
		default:
			hyphen = true
		}
	}
	login := b.String()
	if len(login) > 39 {
		login = strings.TrimRight(login[:39], "-")
	}
	if login == "" {
		return "me"
	}
	return login
}

func (r *resolver) repositories() []Repository {
	var repos []Repository
	seen := map[string]bool{}
	for i, entry := range r.fileRepos {
		key := fmt.Sprintf("repository.%d", i)
		if entry.Name == nil {
			r.problemf("%s: [[repository]] has no name; give it one, such as name = \"owner/name\"", r.at(key))
			continue
		}
		name := *entry.Name
		if _, _, err := ident.ParseRepository(name); err != nil {
			r.problemf("%s: %v", r.fileLabel(key+".name", name), err)
			continue
		}
		if seen[strings.ToLower(name)] {
			r.problemf("%s: is listed twice", r.fileLabel(key+".name", name))
			continue
		}
		seen[strings.ToLower(name)] = true
		repo := Repository{Name: name}
		if entry.Path != nil {
			repo.Path = r.filePath(*entry.Path)
			info, err := os.Stat(repo.Path)
			switch {
			case *entry.Path == "":
				r.problemf("%s: must name a directory; leave path out for a repository without a local checkout", r.fileLabel(key+".path", *entry.Path))
			case errors.Is(err, fs.ErrNotExist):
				r.problemf("%s: no such directory", r.fileLabel(key+".path", *entry.Path))
			case err != nil:
				r.problemf("%s: cannot be read: %v", r.fileLabel(key+".path", *entry.Path), err)
			case !info.IsDir():
				r.problemf("%s: is a file, not a directory", r.fileLabel(key+".path", *entry.Path))
			}
		}
		repos = append(repos, repo)
	}
	return repos
}

// agentName is what an [[acp_agent]] may be called: the name after --acp.
var agentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`) })

func (r *resolver) agents() []Agent {
	var agents []Agent
	seen := map[string]bool{}
	for i, entry := range r.fileAgents {
		key := fmt.Sprintf("acp_agent.%d", i)
		switch {
		case entry.Name == nil:
			r.problemf("%s: [[acp_agent]] has no name; give it one, such as name = \"my-agent\"", r.at(key))
			continue
		case !agentName().MatchString(*entry.Name) || *entry.Name == "exec":
			r.problemf("%s: must be 1 to 40 lowercase letters, digits, hyphens or underscores, and not exec", r.fileLabel(key+".name", *entry.Name))
			continue
		case seen[*entry.Name]:
			r.problemf("%s: is listed twice", r.fileLabel(key+".name", *entry.Name))
			continue
		case len(entry.Command) == 0 || entry.Command[0] == "":
			r.problemf("%s: [[acp_agent]] %q needs command, its command line as a list, such as command = [\"my-agent\", \"--acp\"]", r.at(key), *entry.Name)
			continue
		}
		seen[*entry.Name] = true
		agents = append(agents, Agent{Name: *entry.Name, Command: entry.Command})
	}
	return agents
}

// fileAgent is one [[acp_agent]] table of chopin.toml.
type fileAgent struct {
	Name    *string  `toml:"name"`
	Command []string `toml:"command"`
}

// fileRepository is one [[repository]] table of chopin.toml.
type fileRepository struct {
	Name *string `toml:"name"`
	Path *string `toml:"path"`
}

// readFile reads the config file into r.fileValues and r.fileRepos. A
// missing file is fine unless the person named it with --config. Every
// unknown key and every value of the wrong type is a problem of its own, at
// its line, so that one start lists them all; only a file that is not TOML
// at all stops at its first error.
func (r *resolver) readFile(path string, named bool) {
	r.path = path
	doc, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if named {
			r.problemf("--config=%s: no such file", path)
		}
		return
	}
	if err != nil {
		r.problemf("%s: cannot be read: %v", path, err)
		return
	}
	var file map[string]any
	if err := toml.Unmarshal(doc, &file); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			r.problemf("%s:%d:%d: %s", r.path, line, col, strings.TrimPrefix(de.Error(), "toml: "))
			return
		}
		r.problemf("%s: %v", r.path, err)
		return
	}
	r.lines = keyLines(doc)
	r.fileValues = map[string]any{}
	for _, key := range r.inFileOrder("", file) {
		value := file[key]
		switch key {
		case "repository":
			r.readRepositories(value)
			continue
		case "acp_agent":
			r.readAgents(value)
			continue
		}
		if table, ok := value.(map[string]any); ok && isTable(key) {
			for _, k := range r.inFileOrder(key+".", table) {
				r.readValue(key+"."+k, table[k])
			}
			continue
		}
		r.readValue(key, value)
	}
}

// readValue keeps one key's value if the settings table has the key and the
// value is of its type.
func (r *resolver) readValue(key string, value any) {
	s := settingByKey(key)
	if s == nil {
		if isTable(key) {
			r.wrongType(key, value)
			return
		}
		r.problemf("%s: unknown key %q; chopin.toml.example lists every key", r.at(key), key)
		return
	}
	var ok bool
	switch s.kind {
	case switchSetting:
		_, ok = value.(bool)
	case numberSetting:
		_, ok = value.(int64)
	default:
		_, ok = value.(string)
	}
	if !ok {
		r.wrongType(key, value)
		return
	}
	r.fileValues[key] = value
}

// readRepositories reads the [[repository]] tables.
func (r *resolver) readRepositories(value any) {
	r.fileRepos = readTables(r, "repository", value, func(repo *fileRepository, k, key string, v any) {
		text, isText := v.(string)
		switch {
		case k != "name" && k != "path":
			r.problemf("%s: unknown key %q; chopin.toml.example lists every key", r.at(key), "repository."+k)
		case !isText:
			r.problemf("%s: repository %s must be a string, not %s", r.at(key), k, tomlType(v))
		case k == "name":
			repo.Name = &text
		default:
			repo.Path = &text
		}
	})
}

// readAgents reads the [[acp_agent]] tables; agents checks what they say.
func (r *resolver) readAgents(value any) {
	r.fileAgents = readTables(r, "acp_agent", value, func(agent *fileAgent, k, key string, v any) {
		switch k {
		case "name":
			text, isText := v.(string)
			if !isText {
				r.problemf("%s: acp_agent name must be a string, not %s", r.at(key), tomlType(v))
				return
			}
			agent.Name = &text
		case "command":
			words, isList := v.([]any)
			for _, w := range words {
				text, isText := w.(string)
				isList = isList && isText
				agent.Command = append(agent.Command, text)
			}
			if !isList {
				r.problemf("%s: acp_agent command must be a list of strings, not %s", r.at(key), tomlType(v))
				agent.Command = nil
			}
		default:
			r.problemf("%s: unknown key %q; chopin.toml.example lists every key", r.at(key), "acp_agent."+k)
		}
	})
}

// readTables reads an array of tables ([[name]]) into one T each: read
// takes each key of a table in file order, with its full name for messages
// (name.i.key). Anything but an array of tables is a problem of its own.
func readTables[T any](r *resolver, name string, value any, read func(t *T, k, key string, v any)) []T {
	list, ok := value.([]any)
	if !ok {
		r.wrongType(name, value)
		return nil
	}
	var tables []T
	for i, item := range list {
		entry, ok := item.(map[string]any)
		if !ok {
			r.wrongType(name, value)
			return tables
		}
		var t T
		for _, k := range r.inFileOrder(fmt.Sprintf("%s.%d.", name, i), entry) {
			read(&t, k, fmt.Sprintf("%s.%d.%s", name, i, k), entry[k])
		}
		tables = append(tables, t)
	}
	return tables
}

func (r *resolver) wrongType(key string, value any) {
	r.problemf("%s: %s must be %s, not %s", r.at(key), key, keyKind(key), tomlType(value))
}

// settingByKey is the row of the settings table with the chopin.toml key.
func settingByKey(key string) *setting {
	for i := range settings {
		if settings[i].key == key {
			return &settings[i]
		}
	}
	return nil
}

// isTable reports whether key is a table of chopin.toml, such as account.
func isTable(key string) bool {
	for _, s := range settings {
		if strings.HasPrefix(s.key, key+".") {
			return true
		}
	}
	return false
}

// tomlType names the TOML type of a decoded value, with its article.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// inFileOrder lists the keys of m, a table whose keys are prefix+key in
// r.lines, in the order of their lines, so problems are listed top down.
func (r *resolver) inFileOrder(prefix string, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		// An array of tables has no line of its own; its first table has.
		line := func(k string) int { return max(r.lines[prefix+k], r.lines[prefix+k+".0"]) }
		if la, lb := line(a), line(b); la != lb {
			return la - lb
		}
		return strings.Compare(a, b)
	})
	return keys
}

// keyKind says what the value of a key of chopin.toml must be.
func keyKind(key string) string {
	if key == "repository" || key == "acp_agent" {
		return "a list of tables ([[" + key + "]])"
	}
	for _, s := range settings {
		switch {
		case s.key == key && s.kind == switchSetting:
			return "true or false"
		case s.key == key && s.kind == numberSetting:
			return "a whole number"
		case strings.HasPrefix(s.key, key+"."):
			return "a table ([" + key + "])"
		}
	}
	return "a string"
}

// keyLines maps each key of a valid TOML document to the line it is on:
// "port", "account.login", and "repository.0" (the header) and
// "repository.0.name" for the entries of an array of tables.
func keyLines(doc []byte) map[string]int {
	lines := map[string]int{}
	line := func(offset uint32) int { return 1 + bytes.Count(doc[:offset], []byte("\n")) }
	keyOf := func(it unstable.Iterator) (string, uint32) {
		var parts []string
		var offset uint32
		for first := true; it.Next(); first = false {
			if first {
				offset = it.Node().Raw.Offset
			}
			parts = append(parts, string(it.Node().Data))
		}
		return strings.Join(parts, "."), offset
	}
	arrays := map[string]int{}
	prefix := ""
	var p unstable.Parser
	p.Reset(doc)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			k, off := keyOf(e.Key())
			prefix = k + "."
			lines[k] = line(off)
		case unstable.ArrayTable:
			k, off := keyOf(e.Key())
			n := arrays[k]
			arrays[k]++
			k = fmt.Sprintf("%s.%d", k, n)
			prefix = k + "."
			lines[k] = line(off)
		case unstable.KeyValue:
			k, off := keyOf(e.Key())
			lines[prefix+k] = line(off)
		}
	}
	return lines
}
