package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// The capability-catalog feature ("Capability catalog"): the models,
// thinking levels and commands a client offers. Unlike every other message,
// a catalog is read as written: no string is refused for its spelling or its
// length, fields Chopin has no use for are kept, and only a value of the
// wrong type makes the message malformed. An entry nobody could be asked for
// (a model with an empty id, an empty level) is skipped, never refused.

// Capabilities reports the client's catalog; each report replaces the last.
type Capabilities struct {
	Catalog json.RawMessage `json:"catalog"`
}

func (Capabilities) MessageType() string { return "capabilities" }

func (m *Capabilities) validate() error {
	_, err := ParseCatalog(m.Catalog)
	return err
}

// Catalog is a client's capability report, read as written. Raw is the
// catalog exactly as the client sent it, unknown fields included.
type Catalog struct {
	Models   *CatalogModels   `json:"models,omitempty"`
	Commands []CatalogCommand `json:"commands,omitempty"`
	Raw      json.RawMessage  `json:"-"`
	// Skipped says what was left out because nobody could choose it: a
	// model with an empty id, an empty level, an empty default.
	Skipped []string `json:"-"`
}

// CatalogModels is the catalog's models.
type CatalogModels struct {
	Available []CatalogModel `json:"available"`
	Default   *ModelDefault  `json:"default,omitempty"`
}

// CatalogModel is one model a client offers.
type CatalogModel struct {
	ID             string           `json:"id"`
	Name           string           `json:"name"`
	Provider       *CatalogProvider `json:"provider,omitempty"`
	Description    string           `json:"description,omitempty"`
	ThinkingLevels []string         `json:"thinkingLevels,omitempty"`
	InputTypes     []string         `json:"inputTypes,omitempty"`
}

// CatalogProvider groups models in the picker.
type CatalogProvider struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// ModelDefault is what the client runs when a turn names no model or level.
type ModelDefault struct {
	ID            string `json:"id"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
}

// CatalogCommand is a command the client offers: a skill, a prompt, a workflow.
type CatalogCommand struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Kind        string `json:"kind"`
}

// Model returns the first listed model with id.
func (c *Catalog) Model(id string) (CatalogModel, bool) {
	if c == nil || c.Models == nil || id == "" {
		return CatalogModel{}, false
	}
	for _, m := range c.Models.Available {
		if m.ID == id {
			return m, true
		}
	}
	return CatalogModel{}, false
}

// Reads reports whether the model reads inputType ("image"): a model with
// no inputTypes reads text only.
func (m CatalogModel) Reads(inputType string) bool { return slices.Contains(m.InputTypes, inputType) }

// Command returns the first reported command named name.
func (c *Catalog) Command(name string) (CatalogCommand, bool) {
	if c == nil {
		return CatalogCommand{}, false
	}
	for _, cmd := range c.Commands {
		if cmd.Name == name {
			return cmd, true
		}
	}
	return CatalogCommand{}, false
}

// ParseCatalog reads a catalog as written. It fails only for a value of the
// wrong type; empty model ids and levels are skipped and named in Skipped.
func ParseCatalog(raw json.RawMessage) (Catalog, error) {
	c := Catalog{Raw: raw}
	root, err := object(raw, "catalog")
	if err != nil {
		return c, err
	}
	if v, ok := present(root, "models"); ok {
		models, err := object(v, "catalog.models")
		if err != nil {
			return c, err
		}
		c.Models = &CatalogModels{Available: []CatalogModel{}}
		if v, ok := present(models, "available"); ok {
			list, err := array(v, "catalog.models.available")
			if err != nil {
				return c, err
			}
			for i, e := range list {
				where := fmt.Sprintf("catalog.models.available[%d]", i)
				m, err := parseModel(e, where, &c.Skipped)
				if err != nil {
					return c, err
				}
				if m.ID == "" {
					c.Skipped = append(c.Skipped, where+": a model with an empty id")
					continue
				}
				c.Models.Available = append(c.Models.Available, m)
			}
		}
		if v, ok := present(models, "default"); ok {
			d, err := object(v, "catalog.models.default")
			if err != nil {
				return c, err
			}
			var def ModelDefault
			if err := strField(d, "id", "catalog.models.default", &def.ID); err != nil {
				return c, err
			}
			if err := strField(d, "thinkingLevel", "catalog.models.default", &def.ThinkingLevel); err != nil {
				return c, err
			}
			switch {
			case def.ID == "":
				c.Skipped = append(c.Skipped, "catalog.models.default: an empty id")
			default:
				if _, set := present(d, "thinkingLevel"); set && def.ThinkingLevel == "" {
					c.Skipped = append(c.Skipped, "catalog.models.default.thinkingLevel: empty")
				}
				c.Models.Default = &def
			}
		}
	}
	if v, ok := present(root, "commands"); ok {
		list, err := array(v, "catalog.commands")
		if err != nil {
			return c, err
		}
		c.Commands = []CatalogCommand{}
		for i, e := range list {
			where := fmt.Sprintf("catalog.commands[%d]", i)
			o, err := object(e, where)
			if err != nil {
				return c, err
			}
			var cmd CatalogCommand
			for _, f := range []struct {
				key string
				dst *string
			}{{"name", &cmd.Name}, {"description", &cmd.Description}, {"kind", &cmd.Kind}} {
				if err := strField(o, f.key, where, f.dst); err != nil {
					return c, err
				}
			}
			c.Commands = append(c.Commands, cmd)
		}
	}
	return c, nil
}

func parseModel(raw json.RawMessage, where string, skipped *[]string) (CatalogModel, error) {
	var m CatalogModel
	o, err := object(raw, where)
	if err != nil {
		return m, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"id", &m.ID}, {"name", &m.Name}, {"description", &m.Description}} {
		if err := strField(o, f.key, where, f.dst); err != nil {
			return m, err
		}
	}
	if v, ok := present(o, "provider"); ok {
		p, err := object(v, where+".provider")
		if err != nil {
			return m, err
		}
		m.Provider = &CatalogProvider{}
		if err := strField(p, "id", where+".provider", &m.Provider.ID); err != nil {
			return m, err
		}
		if err := strField(p, "name", where+".provider", &m.Provider.Name); err != nil {
			return m, err
		}
	}
	levels, err := stringList(o, "thinkingLevels", where)
	if err != nil {
		return m, err
	}
	for _, l := range levels {
		if l == "" {
			*skipped = append(*skipped, where+".thinkingLevels: an empty level")
			continue
		}
		m.ThinkingLevels = append(m.ThinkingLevels, l)
	}
	if m.InputTypes, err = stringList(o, "inputTypes", where); err != nil {
		return m, err
	}
	return m, nil
}

// present returns a member that is there and not null: a null optional
// field reads as absent.
func present(o map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	v, ok := o[key]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, false
	}
	return v, true
}

func object(raw json.RawMessage, where string) (map[string]json.RawMessage, error) {
	var o map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &o) != nil {
		return nil, fmt.Errorf("%s must be an object", where)
	}
	return o, nil
}

func array(raw json.RawMessage, where string) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &a) != nil {
		return nil, fmt.Errorf("%s must be an array", where)
	}
	return a, nil
}

func strField(o map[string]json.RawMessage, key, where string, dst *string) error {
	v, ok := present(o, key)
	if !ok {
		return nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '"' || json.Unmarshal(t, dst) != nil {
		return fmt.Errorf("%s.%s must be a string", where, key)
	}
	return nil
}

func stringList(o map[string]json.RawMessage, key, where string) ([]string, error) {
	v, ok := present(o, key)
	if !ok {
		return nil, nil
	}
	list, err := array(v, where+"."+key)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		var s string
		if t := bytes.TrimSpace(e); len(t) == 0 || t[0] != '"' || json.Unmarshal(t, &s) != nil {
			return nil, fmt.Errorf("%s.%s[%d] must be a string", where, key, i)
		}
		out = append(out, s)
	}
	return out, nil
}

// Steer, with steer-turn, gives the running turn a person's message; the
// client answers with ControlResult.
type Steer struct {
	Request string `json:"request"`
	Session string `json:"session"`
	Turn    string `json:"turn"`
	Prompt  string `json:"prompt"`
}

func (Steer) MessageType() string { return "steer" }

// Attachment is an image or text file a person sent with the message that
// began a turn (the attachments feature).
type Attachment struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Kind      string `json:"kind"` // image or file
	MediaType string `json:"mediaType"`
	Size      int    `json:"size"`
	Data      string `json:"data"` // the bytes, standard base64
}
