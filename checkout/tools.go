package checkout

// The tools as a model is offered them: names, descriptions and JSON
// Schemas, one call that decodes a model's input strictly and runs the
// tool, and the paragraph of the system message that introduces them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Tool is one tool as a model is offered it.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // JSON Schema of its input
}

// Tools are the checkout's tools, in the order they are offered.
var Tools = []Tool{
	{
		Name: "list_files",
		Description: fmt.Sprintf("List the files of the repository's local checkout: tracked ones and untracked ones that are not ignored, "+
			"in path order, %d a page. Paths are relative to the checkout's top folder. The result's next: line is the exact call for the next page.", ListPage),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"A folder to list, relative to the checkout, such as src. Default: the whole checkout."},` +
			`"glob":{"type":"string","description":"Only files matching this glob, such as *.go (any folder) or src/**/*_test.go."},` +
			`"cursor":{"type":"string","description":"From the previous page's next: line."}},"additionalProperties":false}`),
	},
	{
		Name: "read_file",
		Description: fmt.Sprintf("Read a text file of the checkout, with line numbers, at most %d bytes a result. "+
			"When the file goes on, the result's next: line is the exact call that continues it; binary files are named as binary with their size.", MaxResultBytes),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"The file, relative to the checkout, such as src/main.go."},` +
			`"offset":{"type":"integer","minimum":1,"description":"The first line to read, 1-based."},` +
			`"limit":{"type":"integer","minimum":1,"description":"The most lines to read."},` +
			`"column":{"type":"integer","minimum":1,"description":"Only from a next: line: the byte of a long line to continue at."}},` +
			`"required":["path"],"additionalProperties":false}`),
	},
	{
		Name: "search_code",
		Description: fmt.Sprintf("Search the checkout's text files (tracked, and untracked but not ignored) for a text or a regular expression. "+
			"Returns at most %d matching lines as file:line: text, and says when the list was cut.", MaxHits),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"The text to find, or with regex an extended regular expression."},` +
			`"path":{"type":"string","description":"A file or folder to search in, relative to the checkout."},` +
			`"regex":{"type":"boolean","description":"pattern is an extended regular expression. Default: plain text."},` +
			`"caseSensitive":{"type":"boolean","description":"Match letter case. Default: any case."}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	},
	{
		Name: "git_log",
		Description: fmt.Sprintf("The checkout's commit history, newest first: short hash, date, author and subject, of the whole checkout or one path. "+
			"%d commits by default, at most %d; the next: line continues.", DefaultLogLimit, MaxLogLimit),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Only commits that changed this file or folder."},` +
			`"rev":{"type":"string","description":"Where to start: a commit, branch or tag. Default: HEAD."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"The most commits."},` +
			`"skip":{"type":"integer","minimum":0,"description":"Only from a next: line: commits to pass over."}},"additionalProperties":false}`),
	},
	{
		Name: "git_show",
		Description: fmt.Sprintf("One commit of the checkout: its author, date, message, changed files and diff, at most %d bytes a result; "+
			"the next: line continues a long diff.", MaxResultBytes),
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"rev":{"type":"string","description":"The commit: a hash from git_log, a branch, a tag or HEAD."},` +
			`"path":{"type":"string","description":"Only this file's or folder's part of the diff."},` +
			`"offset":{"type":"integer","minimum":1,"description":"Only from a next: line: the first line of the output to show."}},` +
			`"required":["rev"],"additionalProperties":false}`),
	},
}

// IsTool reports whether name is one of the checkout's tools.
func IsTool(name string) bool {
	for _, t := range Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Call runs the tool name with a model's input (JSON text). The error is
// an *Error whose message says why the call was refused or failed and what
// to do.
func (c *Checkout) Call(ctx context.Context, name, input string) (string, error) {
	switch name {
	case "list_files":
		var in ListInput
		if err := decode(name, input, &in); err != nil {
			return "", err
		}
		return c.ListFiles(ctx, in)
	case "read_file":
		var in ReadInput
		if err := decode(name, input, &in); err != nil {
			return "", err
		}
		return c.ReadFile(ctx, in)
	case "search_code":
		var in SearchInput
		if err := decode(name, input, &in); err != nil {
			return "", err
		}
		return c.SearchCode(ctx, in)
	case "git_log":
		var in LogInput
		if err := decode(name, input, &in); err != nil {
			return "", err
		}
		return c.GitLog(ctx, in)
	case "git_show":
		var in ShowInput
		if err := decode(name, input, &in); err != nil {
			return "", err
		}
		return c.GitShow(ctx, in)
	}
	return "", refuse("There is no checkout tool named %q.", name)
}

// decode reads a tool's input strictly: one JSON object of its fields.
func decode(tool, input string, v any) error {
	if strings.TrimSpace(input) == "" {
		input = "{}"
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(input)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return refuse("The input of %s could not be read (%s); send one JSON object with the fields its schema lists.", tool, err)
	}
	if dec.More() {
		return refuse("The input of %s must be one JSON object.", tool)
	}
	return nil
}

// Instructions is the paragraph of a system message that introduces the
// checkout and its tools to a model.
func (c *Checkout) Instructions(info Info) string {
	var b strings.Builder
	b.WriteString("## The repository's code\n\n")
	fmt.Fprintf(&b, "You can read the repository's local checkout (%s", c.root)
	if info.Branch != "" {
		fmt.Fprintf(&b, ", branch %s", info.Branch)
	}
	if len(info.Head) >= 12 {
		fmt.Fprintf(&b, ", commit %s", info.Head[:12])
	}
	b.WriteString(") with list_files, read_file, search_code, git_log and git_show. ")
	b.WriteString("Read the code a plan is about before you write the plan, and name the files you read. ")
	b.WriteString("Paths are relative to the checkout's top folder; the tools only read, never write. ")
	b.WriteString("A result that goes on ends its header with a next: line naming the exact call that continues it. ")
	b.WriteString("A call that cannot be answered returns one line starting with Error: that says why and what to do.")
	if !c.repo {
		if c.git == "" {
			b.WriteString(" Git was not found on this computer, so git_log and git_show cannot be used; the other tools walk the folder.")
		} else {
			b.WriteString(" The checkout is not a Git work tree, so git_log and git_show cannot be used.")
		}
	}
	return b.String()
}

// Offered are the tools this checkout can answer: all of them with Git,
// and without it (no git on PATH, or no work tree) those that walk the
// folder.
func (c *Checkout) Offered() []Tool {
	if c.repo {
		return Tools
	}
	var out []Tool
	for _, t := range Tools {
		if !strings.HasPrefix(t.Name, "git_") {
			out = append(out, t)
		}
	}
	return out
}
