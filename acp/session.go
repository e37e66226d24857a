package acp

// The ACP session of a document: opened with session/new when the first
// turn arrives (or session/load of the one the bridge kept, after the bridge
// restarted, when the agent can load sessions), its models and commands as
// the capability catalog, and a person's choice of model set before the
// prompt.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/chopin-desktop/chopin/agentconn/wire"
)

// mcpServerName is the name of the MCP server the bridge offers, which the
// agent shows in its own tool titles.
const mcpServerName = "chopin"

// ensureSession returns the document's ACP session on p, opening it first.
func (d *document) ensureSession(ctx context.Context, p *process) (sdk.SessionId, error) {
	d.start.Lock()
	defer d.start.Unlock()
	d.mu.Lock()
	if d.proc == p && d.session != "" {
		s := d.session
		d.mu.Unlock()
		return s, nil
	}
	d.mu.Unlock()
	cwd, err := d.workingDirectory(ctx)
	if err != nil {
		return "", fmt.Errorf("The agent's working directory could not be made: %v", err)
	}
	servers, err := d.mcpServers(p)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	d.cwd = cwd
	d.mu.Unlock()

	var models *sdk.SessionModelState
	var options []sdk.SessionConfigOption
	id := sdk.SessionId("")
	if kept := d.keptSession(); kept != "" && p.init.AgentCapabilities.LoadSession {
		r, err := p.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(kept), Cwd: cwd, McpServers: servers})
		if err == nil {
			id, models, options = sdk.SessionId(kept), r.Models, r.ConfigOptions
			d.logger().Info("agent session loaded", "session", kept)
		} else {
			d.logger().Warn("agent could not load its session; starting a new one", "session", kept, "err", err)
		}
	}
	if id == "" {
		r, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: servers})
		if err != nil {
			if p.hasExited() {
				return "", p.exitError("while opening its session")
			}
			if re := (*sdk.RequestError)(nil); errors.As(err, &re) && re.Code == authRequired {
				return "", fmt.Errorf("The agent %s needs you to sign in first%s. Sign in with the agent's own command, or set its key in the planner's environment, then @chopin again.", p.name, authWays(p.init.AuthMethods))
			}
			return "", fmt.Errorf("The agent %s could not open a session: %v", p.name, err)
		}
		id, models, options = r.SessionId, r.Models, r.ConfigOptions
		d.keepSession(string(id))
	}
	d.mu.Lock()
	if d.proc == p {
		d.session = id
	}
	d.catalog.setModels(models, options, p.init.AgentCapabilities.PromptCapabilities.Image)
	d.model, d.modelByConfig = sessionModel(models, options)
	d.mu.Unlock()
	d.reportCatalog()
	return id, nil
}

// authRequired is ACP's error code for an agent that needs signing in.
const authRequired = -32000

// authWays names the ways the agent offers to sign in, for a person.
func authWays(methods []sdk.AuthMethod) string {
	var ways []string
	for _, m := range methods {
		switch {
		case m.EnvVar != nil:
			var vars []string
			for _, v := range m.EnvVar.Vars {
				vars = append(vars, v.Name)
			}
			ways = append(ways, m.EnvVar.Name+" ("+strings.Join(vars, ", ")+")")
		case m.Terminal != nil:
			ways = append(ways, m.Terminal.Name)
		case m.Agent != nil:
			ways = append(ways, m.Agent.Name)
		}
	}
	if len(ways) == 0 {
		return ""
	}
	return " (it offers: " + strings.Join(ways, "; ") + ")"
}

// sessionFile is where the document's ACP session id is kept across a
// restart of the bridge.
func (d *document) sessionFile() string {
	d.mu.Lock()
	id := d.id
	d.mu.Unlock()
	sum := 0
	for _, c := range d.b.cfg.Name {
		sum = sum*31 + int(c)
	}
	return filepath.Join(d.b.cfg.DataDir, "acp", "sessions", fmt.Sprintf("%s.%x.json", safeName(id), uint32(sum)))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

type keptSession struct {
	Agent   string `json:"agent"`
	Session string `json:"session"`
}

func (d *document) keptSession() string {
	b, err := os.ReadFile(d.sessionFile())
	if err != nil || len(b) > 4096 {
		return ""
	}
	var k keptSession
	if json.Unmarshal(b, &k) != nil || k.Agent != d.b.cfg.Name {
		return ""
	}
	return k.Session
}

func (d *document) keepSession(id string) {
	f := d.sessionFile()
	b, _ := json.Marshal(keptSession{Agent: d.b.cfg.Name, Session: id})
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err == nil {
		err = os.WriteFile(f, b, 0o600)
		if err != nil {
			d.logger().Warn("keep the agent's session id", "err", err)
		}
	}
}

// modelOption is the session config option that chooses the model.
func modelOption(options []sdk.SessionConfigOption) *sdk.SessionConfigOptionSelect {
	for _, o := range options {
		if s := o.Select; s != nil && s.Category != nil && *s.Category == sdk.SessionConfigOptionCategoryModel {
			return s
		}
	}
	return nil
}

// setModel sets the person's choice of model before the prompt.
func (d *document) setModel(ctx context.Context, p *process, session sdk.SessionId, model string) error {
	d.mu.Lock()
	current, option := d.model, d.modelByConfig
	d.mu.Unlock()
	if model == "" || model == current {
		return nil
	}
	if err := switchModel(ctx, p, session, option, model); err != nil {
		return err
	}
	d.mu.Lock()
	d.model = model
	d.mu.Unlock()
	return nil
}

// switchModel sets session's model: with session/set_config_option when
// the agent has a model option (its id), else with session/set_model.
func switchModel(ctx context.Context, p *process, session sdk.SessionId, option, model string) error {
	var err error
	if option != "" {
		_, err = p.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{
			ValueId: &sdk.SetSessionConfigOptionValueId{SessionId: session, ConfigId: sdk.SessionConfigId(option), Value: sdk.SessionConfigValueId(model)}})
	} else {
		_, err = p.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: session, ModelId: sdk.UnstableModelId(model)})
	}
	if err != nil {
		return fmt.Errorf("The agent %s did not switch to the model %s: %v", p.name, model, err)
	}
	return nil
}

// sessionModel is a new or loaded session's current model, and the id of
// the config option that chooses it when the agent has one.
func sessionModel(models *sdk.SessionModelState, options []sdk.SessionConfigOption) (model, option string) {
	if models != nil {
		model = string(models.CurrentModelId)
	}
	if opt := modelOption(options); opt != nil {
		model, option = string(opt.CurrentValue), string(opt.Id)
	}
	return model, option
}

// catalogState is what the capability catalog is made of.
type catalogState struct {
	models   []wire.CatalogModel
	current  string
	commands []wire.CatalogCommand
	sent     string // the last catalog reported, as JSON
}

func (c *catalogState) setModels(m *sdk.SessionModelState, options []sdk.SessionConfigOption, images bool) {
	inputs := []string{"text"}
	if images {
		inputs = append(inputs, "image")
	}
	c.models, c.current = nil, ""
	if opt := modelOption(options); opt != nil {
		for _, v := range selectValues(opt) {
			c.models = append(c.models, wire.CatalogModel{ID: v.id, Name: v.name, Description: v.description, InputTypes: inputs})
		}
		c.current = string(opt.CurrentValue)
		return
	}
	if m == nil {
		return
	}
	for _, mi := range m.AvailableModels {
		cm := wire.CatalogModel{ID: string(mi.ModelId), Name: mi.Name, InputTypes: inputs}
		if mi.Description != nil {
			cm.Description = *mi.Description
		}
		c.models = append(c.models, cm)
	}
	c.current = string(m.CurrentModelId)
}

func (c *catalogState) setCommands(cmds []sdk.AvailableCommand) {
	c.commands = nil
	for _, cmd := range cmds {
		c.commands = append(c.commands, wire.CatalogCommand{Name: cmd.Name, Description: cmd.Description, Kind: "prompt"})
	}
}

// reportCatalog sends the catalog when it changed since it was last sent on
// this link.
func (d *document) reportCatalog() {
	d.mu.Lock()
	link := d.link
	c := wire.Catalog{Commands: d.catalog.commands}
	if len(d.catalog.models) > 0 {
		c.Models = &wire.CatalogModels{Available: d.catalog.models}
		if d.catalog.current != "" {
			c.Models.Default = &wire.ModelDefault{ID: d.catalog.current}
		}
	}
	b, _ := json.Marshal(c)
	if link == nil || (c.Models == nil && c.Commands == nil) || string(b) == d.catalog.sent || !link.Has(wire.FeatureCapabilityCatalog) {
		d.mu.Unlock()
		return
	}
	d.catalog.sent = string(b)
	d.mu.Unlock()
	if err := link.ReportCapabilities(json.RawMessage(b)); err != nil {
		d.logger().Warn("report the agent's catalog", "err", err)
	}
}

type selectValue struct{ id, name, description string }

// selectValues flattens a select option's values, grouped or not.
func selectValues(s *sdk.SessionConfigOptionSelect) []selectValue {
	var flat []sdk.SessionConfigSelectOption
	if u := s.Options.Ungrouped; u != nil {
		flat = append(flat, *u...)
	}
	if g := s.Options.Grouped; g != nil {
		for _, group := range *g {
			flat = append(flat, group.Options...)
		}
	}
	out := make([]selectValue, 0, len(flat))
	for _, o := range flat {
		v := selectValue{id: string(o.Value), name: o.Name}
		if o.Description != nil {
			v.description = *o.Description
		}
		out = append(out, v)
	}
	return out
}
