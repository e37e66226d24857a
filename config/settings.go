package config

// The settings table (DESIGN.md section 4): every setting a person can give
// Chopin, each spelled once with its environment variable, chopin.toml key,
// flag, default, allowed values and explanation. Load, the --help
// text, the flags the command line accepts and the test of
// chopin.toml.example all read it, so a setting is added or changed here
// and nowhere else.

import (
	"fmt"
	"strconv"
	"time"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// settingKind decides how a setting's value is read, and which TOML type its
// key takes in chopin.toml.
type settingKind int

const (
	textSetting   settingKind = iota // a string, checked by the setting's apply
	onlySetting                      // a string whose only supported value is the default
	switchSetting                    // on or off in the environment, true or false in chopin.toml
	numberSetting                    // a whole number from min to max
)

// A setting is one row of the table. Its name, in --help and in messages, is
// its environment variable; a setting only chopin.toml holds is named by its
// key.
type setting struct {
	env       string               // the environment variable; "" when only chopin.toml holds it
	key       string               // the chopin.toml key, "account.login" inside [account]; "" when the file cannot hold it
	flag      string               // the command-line flag, without "--"; "" when there is none
	flagArg   string               // what --help calls the flag's value, such as "DIR"
	flagValue func(*Flags) *string // where the command line keeps the flag's value

	kind      settingKind
	defText   string // the default of a text setting; "" is unset
	defOn     bool   // the default of a switch
	defNumber int64  // the default of a number
	min, max  int64  // a number's allowed range, inclusive
	// A refused number is told it "must be <noun> from <min> (<minNote>) to
	// <max> (<maxNote>) (0 <zero>)", each note only when given.
	noun, minNote, maxNote, zero string
	// abovePing: the value must be longer than the ping interval, or a
	// client that answers every ping would be dropped between pings.
	abovePing bool

	values  string // for --help: what a text setting takes
	unset   string // for --help: what applies when it is not set, when that is no fixed value
	doc     string // for chopin.toml.example: what it does, after its name and flag
	example string // for chopin.toml.example: the value shown, as TOML, when the default is no fixed value

	// apply checks what only this setting needs checked and stores its value
	// in cfg. Nil for a setting Load does not read (BROWSER).
	apply func(r *resolver, cfg *Config, v resolved)
}

// Bounds the table and the checks of single settings share. Where the
// specification sets a bound, the row or constant says so; the others are
// chosen here.
const (
	DefaultPort = 8787

	// spec: "at most 20, and together at most 1,048,576 bytes before base64";
	// a deployment's own caps are never higher under HARNESS=remote.
	maxChatAttachmentBytes = 1 << 20

	maxModelLength       = 200
	maxDisplayNameLength = 100
)

// envPing is the setting the abovePing settings are compared with.
const envPing = "AGENT_CONNECTION_PING_MS"

const (
	wholeMilliseconds = "a whole number of milliseconds"
	wholeBytes        = "a whole number of bytes"
	// agentMaxNote explains the chat attachment caps' maximum.
	agentMaxNote = "1 MiB, the most the agent connection allows"
)

// settings is the table. Rows without a chopin.toml key are resolved first,
// since they say where the file is; the others in this order, which is the
// order their problems are listed in. envPing comes before the settings that
// must be longer than it.
var settings = []setting{
	{
		env: "AUTH_MODE", key: "auth_mode", kind: onlySetting, defText: "local",
		doc:   `How people sign in. "local" is the only mode: one account, this computer's, signed in through a link Chopin opens in your browser.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.AuthMode = v.text },
	},
	{
		env: "HARNESS", key: "harness", kind: onlySetting, defText: "remote",
		doc:   `Where the Planner runs. "remote" is the only harness: an agent client attaches over the agent connection and runs the model.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.Harness = v.text },
	},
	{
		env: "AGENT", key: "agent", kind: switchSetting, defOn: true,
		doc:   `false turns the agent connection off: /api/v1/agent answers 404. (The environment variable takes on or off.)`,
		apply: func(_ *resolver, c *Config, v resolved) { c.Agent = v.on },
	},
	{
		env: "SERVER_HOST", key: "server_host", flag: "host", flagArg: "HOST",
		flagValue: func(f *Flags) *string { return &f.Host },
		kind:      textSetting, defText: "127.0.0.1",
		values: "127.0.0.1, ::1 or localhost",
		doc:    `The address to serve on: "127.0.0.1", "::1" or "localhost". Nothing else is accepted: Chopin has no sign-in of its own, so it must not be reachable from the network.`,
		apply:  func(r *resolver, c *Config, v resolved) { c.ServerHost = r.loopbackHost(v) },
	},
	{
		env: "PORT", key: "port", flag: "port", flagArg: "PORT",
		flagValue: func(f *Flags) *string { return &f.Port },
		kind:      numberSetting, defNumber: DefaultPort, min: 0, max: 65535,
		noun: "a port number", zero: "picks a free port",
		doc:   `0 to 65535. If another program already uses the port, Chopin takes a free one and says which; 0 always takes a free one.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.Port = int(v.number) },
	},
	{
		// After PORT: the origin must be on the port.
		env: "APP_ORIGIN", key: "app_origin", kind: textSetting,
		values: "loopback http(s) origin on PORT", unset: "default http://SERVER_HOST:PORT",
		doc:     `The origin browsers use, when it is not http://<server_host>:<port>, for instance "http://localhost:8787". It must be a loopback http or https origin on the same port. Default: unset, meaning http://<server_host>:<port>.`,
		example: `"http://127.0.0.1:8787"`,
		apply:   func(r *resolver, c *Config, v resolved) { c.AppOrigin = r.appOrigin(v, c.Port) },
	},
	{
		env: "CHOPIN_DATA_DIR", key: "data_dir", flag: "data-dir", flagArg: "DIR",
		flagValue: func(f *Flags) *string { return &f.DataDir },
		kind:      textSetting,
		values:    "where the database is kept", unset: "default $XDG_DATA_HOME/chopin",
		doc:     `Where Chopin keeps chopin.db and its lock. Nothing in it is meant to be edited. Default: $XDG_DATA_HOME/chopin (on Linux usually ~/.local/share/chopin).`,
		example: `"~/.local/share/chopin"`,
		apply:   func(r *resolver, c *Config, v resolved) { c.DataDir = r.dataDir(v) },
	},
	{
		env: "CHOPIN_CONFIG_DIR", kind: textSetting,
		values: "chopin.toml and the agent token", unset: "default $XDG_CONFIG_HOME/chopin",
		apply: func(r *resolver, c *Config, v resolved) { c.ConfigDir = r.configDir(v) },
	},
	{
		// After CHOPIN_CONFIG_DIR: the file is in it unless named.
		flag: "config", flagArg: "PATH",
		flagValue: func(f *Flags) *string { return &f.ConfigFile },
		kind:      textSetting,
		values:    "the config file", unset: "default: chopin.toml in the config directory",
		apply: func(r *resolver, c *Config, v resolved) { c.ConfigFile = r.configFile(v, c.ConfigDir) },
	},
	{
		env: "MODEL", key: "model", kind: textSetting,
		values: "model named in every turn", unset: "default: the agent's choice",
		doc:   `The model named in every turn sent to the Planner, at most 200 characters. Default: unset, so the agent client uses its own default (a person can still choose a model from the client's catalog in the UI).`,
		apply: func(r *resolver, c *Config, v resolved) { c.Model = r.model(v) },
	},
	{
		env: "PLAN_FILE", key: "plan_file", kind: textSetting, defText: "docs/plans/{slug}.md",
		values: "a path in a checkout, with {slug}",
		doc:    `Where "Save to checkout" writes a document's plan inside its repository's checkout: a relative path with / between folders, in which {slug} becomes the document's slug. Never inside .git.`,
		apply:  func(r *resolver, c *Config, v resolved) { c.PlanFile = r.planFile(v) },
	},
	{
		env: "PLANNER_ATTACH_GRACE_MS", key: "planner_attach_grace_ms", kind: numberSetting,
		defNumber: wire.DefaultGrace.Milliseconds(), min: 0, max: 3_600_000, // spec: 0 to 3600000
		noun:  wholeMilliseconds,
		doc:   `How long, in milliseconds, a Planner that detached keeps its document before another account can attach: 0 to 3600000 (one hour).`,
		apply: func(_ *resolver, c *Config, v resolved) { c.PlannerAttachGrace = v.millis() },
	},
	{
		env: "DESCRIPTION_DEBOUNCE_MS", key: "description_debounce_ms", kind: numberSetting,
		defNumber: 30_000, min: 0, max: 600_000,
		noun:  wholeMilliseconds,
		doc:   `How long, in milliseconds, Chopin waits after the last edit of a document before its Planner writes the document's description again: 0 to 600000.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.DescriptionDebounce = v.millis() },
	},
	{
		env: "HISTORY_DETAIL_DAYS", key: "history_detail_days", kind: numberSetting,
		defNumber: 30, min: 1, max: 3650,
		noun:  "a whole number of days",
		doc:   `How many days of a plan's history are kept change by change: 1 to 3650. Older changes are pruned, in the background, to one snapshot per HISTORY_SNAPSHOT_HOURS.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.HistoryDetailDays = int(v.number) },
	},
	{
		env: "HISTORY_DETAIL_CHANGES", key: "history_detail_changes", kind: numberSetting,
		defNumber: 10_000, min: 100, max: 1_000_000,
		noun:  "a whole number of changes",
		doc:   `At most how many of a plan's newest changes are kept one by one, however recent: 100 to 1000000. Older ones are pruned to snapshots.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.HistoryDetailChanges = int(v.number) },
	},
	{
		env: "HISTORY_SNAPSHOT_HOURS", key: "history_snapshot_hours", kind: numberSetting,
		defNumber: 24, min: 1, max: 8760,
		noun:  "a whole number of hours",
		doc:   `Beyond the detail, a plan's history keeps one version per this many hours: 1 to 8760.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.HistorySnapshotHours = int(v.number) },
	},
	{
		env: "HISTORY_SNAPSHOTS", key: "history_snapshots", kind: numberSetting,
		defNumber: 365, min: 1, max: 100_000,
		noun:  "a whole number of snapshots",
		doc:   `At most how many of those snapshots a plan's history keeps, the newest: 1 to 100000. This bounds the history's size per document.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.HistorySnapshots = int(v.number) },
	},
	{
		env: envPing, key: "agent_connection_ping_ms", kind: numberSetting,
		// The minimum is small for tests.
		defNumber: wire.DefaultPing.Milliseconds(), min: 10, max: 300_000,
		noun:  wholeMilliseconds,
		doc:   `How often, in milliseconds, Chopin pings an agent connection: 10 to 300000.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.AgentPing = v.millis() },
	},
	{
		env: "AGENT_CONNECTION_TIMEOUT_MS", key: "agent_connection_timeout_ms", kind: numberSetting,
		defNumber: wire.DefaultTimeout.Milliseconds(), min: 10, max: 3_600_000,
		noun: wholeMilliseconds, abovePing: true,
		doc:   `An agent connection Chopin hears nothing from for this long is treated as dropped: 10 to 3600000 milliseconds, and longer than the ping interval. Raise it for a client on a slow uplink.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.AgentTimeout = v.millis() },
	},
	{
		env: "AGENT_CONNECTION_MAX_SILENCE_MS", key: "agent_connection_max_silence_ms", kind: numberSetting,
		defNumber: wire.DefaultMaxSilence.Milliseconds(), min: 10, max: 3_600_000, // spec: up to an hour
		noun: wholeMilliseconds, abovePing: true,
		doc:   `An agent connection that sends nothing at all, not even a pong, for this long is dropped even while it is still being sent data: 10 to 3600000 milliseconds (one hour), and longer than the ping interval.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.AgentMaxSilence = v.millis() },
	},
	{
		env: "HANDOVER_PLANNER_WINDOW_MS", key: "handover_planner_window_ms", kind: numberSetting,
		defNumber: 10_000, min: 0, max: 600_000,
		noun:  wholeMilliseconds,
		doc:   `After a restart, how long, in milliseconds, a Planner that held work may take to resume before its document says it is disconnected: 0 to 600000.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.HandoverPlannerWindow = v.millis() },
	},
	{
		env: "MAX_STORED_IMAGE_BYTES", key: "max_stored_image_bytes", kind: numberSetting,
		defNumber: 10 << 20, min: 1 << 10, max: 100 << 20,
		noun: wholeBytes, minNote: "1 KiB", maxNote: "100 MiB",
		doc:   `The most bytes Chopin stores for one image a tool made; a larger image is stored as a smaller copy of itself. 1024 to 104857600 (100 MiB); the default is 10 MiB.`,
		apply: func(_ *resolver, c *Config, v resolved) { c.MaxStoredImageBytes = v.number },
	},
	{
		env: "CHAT_ATTACHMENT_MAX_BYTES", key: "chat_attachment_max_bytes", kind: numberSetting,
		defNumber: maxChatAttachmentBytes, min: 1, max: maxChatAttachmentBytes,
		noun: wholeBytes, maxNote: agentMaxNote,
		doc:   `The largest file a person can attach to a Chat message: 1 to 1048576 bytes (1 MiB, the most the agent connection allows).`,
		apply: func(_ *resolver, c *Config, v resolved) { c.ChatAttachmentMaxBytes = v.number },
	},
	{
		env: "CHAT_ATTACHMENT_MAX_TOTAL_BYTES", key: "chat_attachment_max_total_bytes", kind: numberSetting,
		defNumber: maxChatAttachmentBytes, min: 1, max: maxChatAttachmentBytes,
		noun: wholeBytes, maxNote: agentMaxNote,
		doc:   `The most bytes all of one message's files may add up to: 1 to 1048576 (1 MiB, the most the agent connection allows).`,
		apply: func(_ *resolver, c *Config, v resolved) { c.ChatAttachmentMaxTotal = v.number },
	},
	{
		key: "account.login", kind: textSetting,
		doc:     `Your login, GitHub style: 1 to 39 letters, digits or single hyphens, not starting or ending with a hyphen. Default: your user name on this computer, reduced to those characters ("me" if nothing is left).`,
		example: `"ada"`,
		apply:   func(r *resolver, c *Config, v resolved) { c.Login = r.login(v) },
	},
	{
		// After account.login: the name defaults to the login.
		key: "account.name", kind: textSetting,
		doc:     `The name shown for you, at most 100 characters. Default: the full name of your account on this computer, else the login.`,
		example: `"Ada Lovelace"`,
		apply:   func(r *resolver, c *Config, v resolved) { c.DisplayName = r.displayName(v, c.Login) },
	},
	{
		// OpenBrowser reads it when it opens a link; it is here for --help.
		env: "BROWSER", kind: textSetting,
		values: "the browser command to open links with",
	},
}

// name is how the table's own tests refer to a row.
func (s *setting) name() string {
	if s.env != "" {
		return s.env
	}
	if s.key != "" {
		return s.key
	}
	return "--" + s.flag
}

// want says what a valid number is, after "must be ".
func (s *setting) want() string {
	note := func(n int64, note string) string {
		if note == "" {
			return strconv.FormatInt(n, 10)
		}
		return fmt.Sprintf("%d (%s)", n, note)
	}
	w := fmt.Sprintf("%s from %s to %s", s.noun, note(s.min, s.minNote), note(s.max, s.maxNote))
	if s.zero != "" {
		w += " (0 " + s.zero + ")"
	}
	return w
}

// allowed is the values --help lists for the setting, without its default.
func (s *setting) allowed() string {
	switch s.kind {
	case onlySetting:
		return s.defText + " (the only supported value)"
	case switchSetting:
		return "on or off"
	case numberSetting:
		a := fmt.Sprintf("%d to %d", s.min, s.max)
		if s.zero != "" {
			a += ", 0 " + s.zero
		}
		if s.abovePing {
			a += ", above the ping interval"
		}
		return a
	}
	return s.values
}

// defaultHelp is the setting's default as --help gives it, in parentheses
// after allowed, or "" when it has none to give.
func (s *setting) defaultHelp() string {
	switch {
	case s.unset != "":
		return s.unset
	case s.kind == switchSetting:
		return "default " + onOff(s.defOn)
	case s.kind == numberSetting:
		return fmt.Sprintf("default %d", s.defNumber)
	case s.kind == textSetting && s.defText != "":
		return "default " + s.defText
	}
	return ""
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// exampleValue is the value chopin.toml.example shows for the key, as TOML.
func (s *setting) exampleValue() string {
	switch {
	case s.example != "":
		return s.example
	case s.kind == switchSetting:
		return strconv.FormatBool(s.defOn)
	case s.kind == numberSetting:
		return strconv.FormatInt(s.defNumber, 10)
	}
	return strconv.Quote(s.defText)
}

// resolved is a setting's value and the label that names where it came
// from, such as "PORT=99999" or "/home/me/.config/chopin/chopin.toml:3:
// port = 99999", so that a message points at the place to fix. ok is false
// when the value was refused; the value is then the default, to keep the
// other checks quiet.
type resolved struct {
	text   string // a text setting's value
	on     bool   // a switch's
	number int64  // a number's

	label    string
	ok       bool
	set      bool // given by a flag, the environment or the file
	fromFile bool
}

func (v resolved) millis() time.Duration { return time.Duration(v.number) * time.Millisecond }
