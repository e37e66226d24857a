package app

// Loading the configuration (DESIGN.md section 4): LoadConfig resolves every
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
	"path/filepath"
	"reflect"
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
	Repositories []ConfigRepository
}

// ConfigRepository is a repository registered through the config file.
type ConfigRepository struct {
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

// ConfigError lists every problem LoadConfig found, one line each, so a person
// can fix them all at once instead of one per start.
type ConfigError struct {
	Problems []string
}

func (e *ConfigError) Error() string { return strings.Join(e.Problems, "\n") }

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

	if len(r.problems) > 0 {
		return Config{}, &ConfigError{Problems: r.problems}
	}
	return cfg, nil
}

// resolver carries what LoadConfig reads and the problems it has found so far.
type resolver struct {
	flags      Flags
	getenv     func(string) string
	fileValues map[string]any // chopin.toml's values by key ("port", "account.login")
	fileRepos  []fileRepository
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

// isLoopbackName reports whether host (without brackets) names this computer.
func isLoopbackName(host string) bool {
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
	if !isLoopbackName(host) || p != strconv.Itoa(port) {
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

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// loginPattern is a GitHub login: letters, digits and single hyphens, neither
// starting nor ending with a hyphen, at most 39 characters.
var loginPattern = regexp.MustCompile(`^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$`)

func validLogin(s string) bool { return len(s) <= 39 && loginPattern.MatchString(s) }

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

func (r *resolver) repositories() []ConfigRepository {
	var repos []ConfigRepository
	seen := map[string]bool{}
	for i, entry := range r.fileRepos {
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

// fileRepository is one [[repository]] table of chopin.toml.
type fileRepository struct {
	Name *string `toml:"name"`
	Path *string `toml:"path"`
}

// fileSchema is the Go type chopin.toml decodes into, made from the settings
// table: a pointer field per key (nil when the file leaves the key out), a
// struct per table such as [account], and the [[repository]] list. Decoding
// into it, go-toml itself refuses an unknown key or a value of the wrong
// type, at its line. fileFields is where each key's field is.
var fileSchema, fileFields = makeFileSchema()

func makeFileSchema() (reflect.Type, map[string][]int) {
	goType := map[settingKind]reflect.Type{
		textSetting:   reflect.TypeFor[*string](),
		onlySetting:   reflect.TypeFor[*string](),
		switchSetting: reflect.TypeFor[*bool](),
		numberSetting: reflect.TypeFor[*int64](),
	}
	field := func(key string, typ reflect.Type) reflect.StructField {
		return reflect.StructField{
			Name: strings.ToUpper(key[:1]) + key[1:],
			Type: typ,
			Tag:  reflect.StructTag(`toml:"` + key + `"`),
		}
	}
	var top []reflect.StructField
	tableAt := map[string]int{}
	tableFields := map[string][]reflect.StructField{}
	fields := map[string][]int{}
	for _, s := range settings {
		if s.key == "" {
			continue
		}
		table, key, inTable := strings.Cut(s.key, ".")
		if !inTable {
			fields[s.key] = []int{len(top)}
			top = append(top, field(s.key, goType[s.kind]))
			continue
		}
		at, ok := tableAt[table]
		if !ok {
			at = len(top)
			tableAt[table] = at
			top = append(top, field(table, nil)) // its type once all its keys are known
		}
		fields[s.key] = []int{at, len(tableFields[table])}
		tableFields[table] = append(tableFields[table], field(key, goType[s.kind]))
	}
	for table, at := range tableAt {
		top[at].Type = reflect.StructOf(tableFields[table])
	}
	top = append(top, field("repository", reflect.TypeFor[[]fileRepository]()))
	return reflect.StructOf(top), fields
}

// readFile decodes the config file into r.fileValues and r.fileRepos. A missing file is fine unless
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
	file := reflect.New(fileSchema).Elem()
	if err := dec.Decode(file.Addr().Interface()); err != nil {
		r.fileError(err)
		return
	}
	r.fileValues = map[string]any{}
	for key, index := range fileFields {
		if f := file.FieldByIndex(index); !f.IsNil() {
			r.fileValues[key] = f.Elem().Interface()
		}
	}
	r.fileRepos = file.FieldByName("Repository").Interface().([]fileRepository)
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
		// "cannot decode TOML string into struct field .Port of type *int64"
		// says more about Go than about the file.
		if m := typeMismatch.FindStringSubmatch(msg); m != nil && len(de.Key()) > 0 {
			key := strings.Join(de.Key(), ".")
			msg = fmt.Sprintf("%s must be %s, not a %s", key, keyKind(key), m[1])
		}
		r.problemf("%s:%d:%d: %s", r.path, line, col, msg)
		return
	}
	r.problemf("%s: %v", r.path, err)
}

var typeMismatch = regexp.MustCompile(`^cannot decode TOML (.+?) into `)

// keyKind says what the value of a key of chopin.toml must be.
func keyKind(key string) string {
	if key == "repository" {
		return "a list of tables ([[repository]])"
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
