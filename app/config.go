package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/adrg/xdg"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"golang.org/x/text/unicode/norm"

	"github.com/chopin-desktop/chopin/store"
)

// Config is the whole configuration of one Chopin process. It is built by
// LoadConfig from flags, environment, chopin.toml and defaults, in that order
// of precedence, and validated before anything starts.
type Config struct {
	AuthMode string // AUTH_MODE: only "local"
	Harness  string // HARNESS: only "remote"
	Agent    bool   // AGENT: false makes /api/v1/agent answer 404

	ServerHost string // SERVER_HOST: 127.0.0.1, ::1 or localhost
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

	PlannerAttachGrace     time.Duration // PLANNER_ATTACH_GRACE_MS
	AgentPing              time.Duration // AGENT_CONNECTION_PING_MS
	AgentTimeout           time.Duration // AGENT_CONNECTION_TIMEOUT_MS
	AgentMaxSilence        time.Duration // AGENT_CONNECTION_MAX_SILENCE_MS
	HandoverPlannerWindow  time.Duration // HANDOVER_PLANNER_WINDOW_MS
	AgentAnswerTimeout     time.Duration // tests only: the wait for stop and resume answers; zero is 10 s
	MaxStoredImageBytes    int64         // MAX_STORED_IMAGE_BYTES
	ChatAttachmentMaxBytes int64         // CHAT_ATTACHMENT_MAX_BYTES
	ChatAttachmentMaxTotal int64         // CHAT_ATTACHMENT_MAX_TOTAL_BYTES

	// Repositories listed in the config file ([[repository]] name, path).
	Repositories []ConfigRepository
}

// ConfigRepository is a repository registered through the config file.
type ConfigRepository struct {
	Name string // owner/name
	Path string // optional local checkout; absolute, an existing directory
}

// Flags are the global command-line flags. An empty field was not given.
// Port is kept as text so that it is validated, and its failure reported,
// exactly like PORT.
type Flags struct {
	ConfigFile string // --config
	DataDir    string // --data-dir
	Host       string // --host
	Port       string // --port
}

// ConfigError lists every problem LoadConfig found, one line each, so a person
// can fix them all at once instead of one per start.
type ConfigError struct {
	Problems []string
}

func (e *ConfigError) Error() string { return strings.Join(e.Problems, "\n") }

// Defaults and bounds. The bounds that the specification sets are marked;
// the others are chosen here and documented in chopin.toml.example.
const (
	DefaultPort = 8787

	defaultPlannerAttachGraceMS = 120_000
	maxPlannerAttachGraceMS     = 3_600_000 // spec: 0 to 3600000

	defaultAgentPingMS = 15_000
	minAgentIntervalMS = 10 // small values are for tests
	maxAgentPingMS     = 300_000

	defaultAgentTimeoutMS = 120_000
	maxAgentTimeoutMS     = 3_600_000

	defaultAgentMaxSilenceMS = 900_000
	maxAgentMaxSilenceMS     = 3_600_000 // spec: up to an hour

	defaultHandoverPlannerWindowMS = 10_000
	maxHandoverPlannerWindowMS     = 600_000

	defaultMaxStoredImageBytes = 10 << 20
	minMaxStoredImageBytes     = 1 << 10
	maxMaxStoredImageBytes     = 100 << 20

	// spec: "at most 20, and together at most 1,048,576 bytes before base64";
	// a deployment's own caps are never higher under HARNESS=remote.
	maxChatAttachmentBytes = 1 << 20

	maxModelLength       = 200
	maxDisplayNameLength = 100
)

// The keys of chopin.toml. Pointers tell "absent" from a zero value.
type fileConfig struct {
	AuthMode   *string `toml:"auth_mode"`
	Harness    *string `toml:"harness"`
	Agent      *bool   `toml:"agent"`
	ServerHost *string `toml:"server_host"`
	Port       *int64  `toml:"port"`
	AppOrigin  *string `toml:"app_origin"`
	DataDir    *string `toml:"data_dir"`
	Model      *string `toml:"model"`

	PlannerAttachGraceMS        *int64 `toml:"planner_attach_grace_ms"`
	AgentConnectionPingMS       *int64 `toml:"agent_connection_ping_ms"`
	AgentConnectionTimeoutMS    *int64 `toml:"agent_connection_timeout_ms"`
	AgentConnectionMaxSilenceMS *int64 `toml:"agent_connection_max_silence_ms"`
	HandoverPlannerWindowMS     *int64 `toml:"handover_planner_window_ms"`
	MaxStoredImageBytes         *int64 `toml:"max_stored_image_bytes"`
	ChatAttachmentMaxBytes      *int64 `toml:"chat_attachment_max_bytes"`
	ChatAttachmentMaxTotalBytes *int64 `toml:"chat_attachment_max_total_bytes"`

	Account struct {
		Login *string `toml:"login"`
		Name  *string `toml:"name"`
	} `toml:"account"`

	Repository []struct {
		Name *string `toml:"name"`
		Path *string `toml:"path"`
	} `toml:"repository"`
}

// currentUser is the OS account the login and display name default to.
// A variable so tests can pretend to be someone else.
var currentUser = user.Current

// LoadConfig builds the configuration from flags, then the environment (read
// through getenv; an empty value counts as unset), then chopin.toml, then
// defaults, and validates all of it. When anything is wrong it returns a
// *ConfigError listing every problem; the Config is then unusable.
//
// The config file is flags.ConfigFile, or chopin.toml in the config directory
// (CHOPIN_CONFIG_DIR, else $XDG_CONFIG_HOME/chopin); only a file named by
// --config must exist. LoadConfig reads and checks but creates nothing.
func LoadConfig(flags Flags, getenv func(string) string) (Config, error) {
	r := &resolver{flags: flags, getenv: getenv}
	var cfg Config

	cfg.ConfigDir = r.xdgDir("XDG_CONFIG_HOME", xdg.ConfigHome)
	if v := getenv("CHOPIN_CONFIG_DIR"); v != "" {
		cfg.ConfigDir = r.abs("CHOPIN_CONFIG_DIR="+v, v)
	}
	cfg.ConfigFile = filepath.Join(cfg.ConfigDir, "chopin.toml")
	if flags.ConfigFile != "" {
		cfg.ConfigFile = r.abs("--config="+flags.ConfigFile, flags.ConfigFile)
	}
	r.readFile(cfg.ConfigFile, flags.ConfigFile != "")
	f := &r.file

	cfg.AuthMode = r.choice(r.str("", "AUTH_MODE", "auth_mode", f.AuthMode, "local"), "local")
	cfg.Harness = r.choice(r.str("", "HARNESS", "harness", f.Harness, "remote"), "remote")
	cfg.Agent = r.agent(f.Agent)

	host := r.str(flags.Host, "SERVER_HOST", "server_host", f.ServerHost, "127.0.0.1")
	cfg.ServerHost = r.loopbackHost(host)

	port := r.integer(intSetting{
		flag: flags.Port, flagName: "--port", env: "PORT", key: "port", file: f.Port,
		def: DefaultPort, min: 0, max: 65535,
		want: "a port number from 0 to 65535 (0 picks a free port)",
	})
	cfg.Port = int(port.value)
	cfg.AppOrigin = r.appOrigin(r.str("", "APP_ORIGIN", "app_origin", f.AppOrigin, ""), cfg.Port)

	cfg.DataDir = r.dataDir(f.DataDir)

	cfg.Model = r.model(r.str("", "MODEL", "model", f.Model, ""))

	ms := func(env, key string, file *int64, def, min, max int64) setting[int64] {
		return r.integer(intSetting{
			env: env, key: key, file: file, def: def, min: min, max: max,
			want: fmt.Sprintf("a whole number of milliseconds from %d to %d", min, max),
		})
	}
	grace := ms("PLANNER_ATTACH_GRACE_MS", "planner_attach_grace_ms", f.PlannerAttachGraceMS,
		defaultPlannerAttachGraceMS, 0, maxPlannerAttachGraceMS)
	ping := ms("AGENT_CONNECTION_PING_MS", "agent_connection_ping_ms", f.AgentConnectionPingMS,
		defaultAgentPingMS, minAgentIntervalMS, maxAgentPingMS)
	timeout := ms("AGENT_CONNECTION_TIMEOUT_MS", "agent_connection_timeout_ms", f.AgentConnectionTimeoutMS,
		defaultAgentTimeoutMS, minAgentIntervalMS, maxAgentTimeoutMS)
	silence := ms("AGENT_CONNECTION_MAX_SILENCE_MS", "agent_connection_max_silence_ms", f.AgentConnectionMaxSilenceMS,
		defaultAgentMaxSilenceMS, minAgentIntervalMS, maxAgentMaxSilenceMS)
	handover := ms("HANDOVER_PLANNER_WINDOW_MS", "handover_planner_window_ms", f.HandoverPlannerWindowMS,
		defaultHandoverPlannerWindowMS, 0, maxHandoverPlannerWindowMS)
	// A client that answers every ping must never be dropped for it.
	if ping.ok && timeout.ok && timeout.value <= ping.value {
		r.problemf("%s: must be longer than the ping interval (%s), or a connection that answers every ping would be dropped between pings", timeout.label, ping.label)
	}
	if ping.ok && silence.ok && silence.value <= ping.value {
		r.problemf("%s: must be longer than the ping interval (%s), or a connection that answers every ping would be dropped between pings", silence.label, ping.label)
	}
	cfg.PlannerAttachGrace = time.Duration(grace.value) * time.Millisecond
	cfg.AgentPing = time.Duration(ping.value) * time.Millisecond
	cfg.AgentTimeout = time.Duration(timeout.value) * time.Millisecond
	cfg.AgentMaxSilence = time.Duration(silence.value) * time.Millisecond
	cfg.HandoverPlannerWindow = time.Duration(handover.value) * time.Millisecond

	cfg.MaxStoredImageBytes = r.integer(intSetting{
		env: "MAX_STORED_IMAGE_BYTES", key: "max_stored_image_bytes", file: f.MaxStoredImageBytes,
		def: defaultMaxStoredImageBytes, min: minMaxStoredImageBytes, max: maxMaxStoredImageBytes,
		want: fmt.Sprintf("a whole number of bytes from %d (1 KiB) to %d (100 MiB)", minMaxStoredImageBytes, maxMaxStoredImageBytes),
	}).value
	attachmentWant := fmt.Sprintf("a whole number of bytes from 1 to %d (1 MiB, the most the agent connection allows)", maxChatAttachmentBytes)
	cfg.ChatAttachmentMaxBytes = r.integer(intSetting{
		env: "CHAT_ATTACHMENT_MAX_BYTES", key: "chat_attachment_max_bytes", file: f.ChatAttachmentMaxBytes,
		def: maxChatAttachmentBytes, min: 1, max: maxChatAttachmentBytes, want: attachmentWant,
	}).value
	cfg.ChatAttachmentMaxTotal = r.integer(intSetting{
		env: "CHAT_ATTACHMENT_MAX_TOTAL_BYTES", key: "chat_attachment_max_total_bytes", file: f.ChatAttachmentMaxTotalBytes,
		def: maxChatAttachmentBytes, min: 1, max: maxChatAttachmentBytes, want: attachmentWant,
	}).value

	cfg.Login, cfg.DisplayName = r.account()
	cfg.Repositories = r.repositories()

	if len(r.problems) > 0 {
		return Config{}, &ConfigError{Problems: r.problems}
	}
	return cfg, nil
}

// resolver carries what LoadConfig reads and the problems it has found so far.
type resolver struct {
	flags    Flags
	getenv   func(string) string
	file     fileConfig
	path     string         // the config file, for messages
	lines    map[string]int // key path ("port", "account.login", "repository.1.name") -> line
	problems []string
}

func (r *resolver) problemf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// setting is a resolved value and the label that names where it came from,
// such as "PORT=99999" or "/home/me/.config/chopin/chopin.toml:3: port = 99999",
// so that a message points at the place to fix. ok is false when the value
// was refused (value is then the default, to keep the other checks quiet).
type setting[T any] struct {
	value    T
	label    string
	ok       bool
	set      bool // given by a flag, the environment or the file
	fromFile bool
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

// str resolves a text setting: the flag value if given, else the environment,
// else the file, else def.
func (r *resolver) str(flagValue, env, key string, file *string, def string) setting[string] {
	switch {
	case flagValue != "":
		return setting[string]{value: flagValue, label: "--" + flagNameFor(env) + "=" + flagValue, ok: true, set: true}
	case r.getenv(env) != "":
		v := r.getenv(env)
		return setting[string]{value: v, label: env + "=" + v, ok: true, set: true}
	case file != nil:
		return setting[string]{value: *file, label: r.fileLabel(key, *file), ok: true, set: true, fromFile: true}
	}
	return setting[string]{value: def, label: env + "=" + def, ok: true}
}

// flagNameFor names the flag that overrides an environment variable.
func flagNameFor(env string) string {
	switch env {
	case "SERVER_HOST":
		return "host"
	case "PORT":
		return "port"
	case "CHOPIN_DATA_DIR":
		return "data-dir"
	}
	return strings.ToLower(env)
}

// choice accepts only the one value Chopin supports today.
func (r *resolver) choice(s setting[string], supported string) string {
	if s.value != supported {
		r.problemf("%s: not supported; the only supported value is %q", s.label, supported)
	}
	return supported
}

func (r *resolver) agent(file *bool) bool {
	if v := r.getenv("AGENT"); v != "" {
		switch strings.ToLower(v) {
		case "on", "true", "1":
			return true
		case "off", "false", "0":
			return false
		}
		r.problemf("AGENT=%s: must be on or off", v)
		return true
	}
	if file != nil {
		return *file
	}
	return true
}

type intSetting struct {
	flag, flagName string // the flag's value, if given, and its name
	env, key       string
	file           *int64
	def, min, max  int64
	want           string // what a valid value is, after "must be "
}

func (r *resolver) integer(s intSetting) setting[int64] {
	out := setting[int64]{value: s.def, ok: true}
	var text string
	switch {
	case s.flag != "":
		out.label, text, out.set = s.flagName+"="+s.flag, s.flag, true
	case r.getenv(s.env) != "":
		text = r.getenv(s.env)
		out.label, out.set = s.env+"="+text, true
	case s.file != nil:
		out.label, out.set = r.fileLabel(s.key, *s.file), true
		if *s.file < s.min || *s.file > s.max {
			r.problemf("%s: must be %s", out.label, s.want)
			out.ok = false
			return out
		}
		out.value = *s.file
		return out
	default:
		out.label = fmt.Sprintf("%s=%d", s.env, s.def)
		return out
	}
	// Only plain decimal digits: no sign, no spaces, no "10s" or "1e3".
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n < s.min || n > s.max || strings.TrimLeft(text, "0123456789") != "" {
		r.problemf("%s: must be %s", out.label, s.want)
		out.ok = false
		return out
	}
	out.value = n
	return out
}

// loopbackHost accepts only names of this computer: Chopin has no sign-in,
// so whoever can reach it can read and change every document.
func (r *resolver) loopbackHost(s setting[string]) string {
	host := strings.TrimSuffix(strings.TrimPrefix(s.value, "["), "]")
	switch strings.ToLower(host) {
	case "127.0.0.1", "::1", "localhost":
		return strings.ToLower(host)
	}
	r.problemf("%s: Chopin listens only on this computer (127.0.0.1, ::1 or localhost); it has no sign-in, so anyone who could reach it over the network could read and change your documents", s.label)
	return "127.0.0.1"
}

// isLoopbackName reports whether host (without brackets) names this computer.
func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// appOrigin checks APP_ORIGIN and returns it as scheme://host:port.
func (r *resolver) appOrigin(s setting[string], port int) string {
	if !s.set {
		return ""
	}
	if port == 0 {
		r.problemf("%s: cannot be set when the port is 0, since the port is not known until Chopin starts", s.label)
		return ""
	}
	want := fmt.Sprintf("must be a loopback http or https origin on port %d, such as http://127.0.0.1:%d", port, port)
	u, err := url.Parse(s.value)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		r.problemf("%s: %s", s.label, want)
		return ""
	}
	host, p := u.Hostname(), u.Port()
	if p == "" {
		p = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if !isLoopbackName(host) || p != strconv.Itoa(port) {
		r.problemf("%s: %s", s.label, want)
		return ""
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(host), p)
}

// dataDir resolves CHOPIN_DATA_DIR, which may not exist yet.
func (r *resolver) dataDir(file *string) string {
	s := r.str(r.flags.DataDir, "CHOPIN_DATA_DIR", "data_dir", file, "")
	if !s.set {
		return r.xdgDir("XDG_DATA_HOME", xdg.DataHome)
	}
	path := s.value
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

func (r *resolver) model(s setting[string]) string {
	if !s.set {
		return ""
	}
	if len([]rune(s.value)) > maxModelLength || strings.TrimSpace(s.value) != s.value || hasControl(s.value) {
		r.problemf("%s: must be a model name of at most %d characters, without spaces at either end or control characters", s.label, maxModelLength)
		return ""
	}
	return s.value
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// loginPattern is a GitHub login: letters, digits and single hyphens, neither
// starting nor ending with a hyphen, at most 39 characters.
var loginPattern = regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$`)

func validLogin(s string) bool { return len(s) <= 39 && loginPattern.MatchString(s) }

// account resolves the local account's login and display name.
func (r *resolver) account() (login, name string) {
	f := r.file.Account
	var osName string
	if u, err := currentUser(); err == nil {
		login = LoginFromUserName(u.Username)
		// On Unix, Name is the GECOS field: "Full Name,room,phone,...".
		osName, _, _ = strings.Cut(u.Name, ",")
		osName = strings.TrimSpace(osName)
	} else {
		login = "me"
	}
	if f.Login != nil {
		if validLogin(*f.Login) {
			login = *f.Login
		} else {
			r.problemf("%s: must be a GitHub-style login: 1 to 39 letters, digits or single hyphens, not starting or ending with a hyphen", r.fileLabel("account.login", *f.Login))
		}
	}
	if f.Name != nil {
		n := *f.Name
		if n == "" || strings.TrimSpace(n) != n || hasControl(n) || len([]rune(n)) > maxDisplayNameLength {
			r.problemf("%s: must be 1 to %d characters, without spaces at either end or control characters", r.fileLabel("account.name", n), maxDisplayNameLength)
		}
		return login, n
	}
	if osName != "" && !hasControl(osName) && len([]rune(osName)) <= maxDisplayNameLength {
		return login, osName
	}
	return login, login
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

func (r *resolver) repositories() []ConfigRepository {
	var repos []ConfigRepository
	seen := map[string]bool{}
	for i, entry := range r.file.Repository {
		key := fmt.Sprintf("repository.%d", i)
		if entry.Name == nil {
			r.problemf("%s: [[repository]] has no name; give it one, such as name = \"owner/name\"", r.at(key))
			continue
		}
		name := *entry.Name
		if _, _, err := store.ParseRepositoryName(name); err != nil {
			r.problemf("%s: %v", r.fileLabel(key+".name", name), err)
			continue
		}
		if seen[strings.ToLower(name)] {
			r.problemf("%s: is listed twice", r.fileLabel(key+".name", name))
			continue
		}
		seen[strings.ToLower(name)] = true
		repo := ConfigRepository{Name: name}
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

// readFile decodes the config file into r.file. A missing file is fine unless
// the person named it with --config.
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
	dec := toml.NewDecoder(bytes.NewReader(doc)).DisallowUnknownFields()
	var f fileConfig
	if err := dec.Decode(&f); err != nil {
		r.fileError(err)
		return
	}
	r.file = f
	r.lines = keyLines(doc)
}

// fileError turns go-toml's errors into one line per problem, each naming
// the file, line and key.
func (r *resolver) fileError(err error) {
	var missing *toml.StrictMissingError
	if errors.As(err, &missing) {
		for _, e := range missing.Errors {
			line, _ := e.Position()
			r.problemf("%s:%d: unknown key %q; chopin.toml.example lists every key", r.path, line, strings.Join(e.Key(), "."))
		}
		return
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		// "cannot decode TOML string into struct field app.fileConfig.Port of type *int64"
		// says more about Go than about the file.
		if m := typeMismatch.FindStringSubmatch(msg); m != nil && len(de.Key()) > 0 {
			key := strings.Join(de.Key(), ".")
			msg = fmt.Sprintf("%s must be %s, not a %s", key, keyKind(lastKeyPart(key)), m[1])
		}
		r.problemf("%s:%d:%d: %s", r.path, line, col, msg)
		return
	}
	r.problemf("%s: %v", r.path, err)
}

var typeMismatch = regexp.MustCompile(`^cannot decode TOML (\w+) into`)

func keyKind(key string) string {
	switch key {
	case "agent":
		return "true or false"
	case "account":
		return "a table ([account])"
	case "repository":
		return "a list of tables ([[repository]])"
	}
	if strings.HasSuffix(key, "_ms") || strings.HasSuffix(key, "_bytes") || key == "port" {
		return "a whole number"
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
