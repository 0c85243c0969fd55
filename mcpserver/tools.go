package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/server"
)

// tools runs each tool through the HTTP API route that does the same work,
// in process: the arguments are the route's request body.
type tools struct {
	api    *server.Handler
	budget int
}

// toolSpec is one tool: its name, the route it runs, what it says about
// itself, and how the route's answer becomes the tool's result.
type toolSpec struct {
	name, route, title, desc string
	// prepare may rewrite the arguments before they are sent.
	prepare func(args map[string]json.RawMessage) error
	// result turns the route's answer into the structured content and the
	// text content.
	result func(answer []byte) (structured json.RawMessage, text string, err error)
}

func (t *tools) specs() []toolSpec {
	return []toolSpec{
		{name: "query_context", route: server.PathQuery, title: "Query context",
			desc: "Fan a goal out to ctxkit's providers (local files, CGP and MCP servers), audit each reply and compose the " +
				"evidence under one token budget. The text result is the fenced evidence to place in your prompt; " +
				"structuredContent adds the citations, the audit of every frame kept or dropped, and one outcome per provider.",
			prepare: t.defaultBudget, result: queryResult},
		{name: "compose_frames", route: server.PathCompose, title: "Compose frames",
			desc: "Compose CGP frames you already hold under a token budget: rank, pack and fence them, with an audit " +
				"of every frame. The text result is the fenced prompt.",
			result: promptResult},
		{name: "assess_request", route: server.PathAssess, title: "Assess a model request",
			desc: "Count what a model request (Anthropic, OpenAI or Gemini body) uses of the model's context window, " +
				"lane by lane, what is left after the reserves, and whether to compact.",
			result: jsonResult},
		{name: "quote_untrusted", route: server.PathPrompt, title: "Quote untrusted text",
			desc: "Build a prompt from your own text and untrusted text; each untrusted part is quoted in a nonce fence " +
				"it cannot close. The text result is the prompt.",
			result: promptResult},
	}
}

func (t *tools) register(s *mcp.Server) error {
	for _, spec := range t.specs() {
		in, err := loadSchema(spec.name + ".in")
		if err != nil {
			return err
		}
		out, err := loadSchema(spec.name + ".out")
		if err != nil {
			return err
		}
		tool := &mcp.Tool{Name: spec.name, Title: spec.title, Description: spec.desc, InputSchema: in, OutputSchema: out,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(spec.name == "query_context")}}
		mcp.AddTool(s, tool, t.handler(spec))
	}
	return nil
}

// handler runs spec's route with the call's arguments, already checked
// against the input schema by the SDK.
func (t *tools) handler(spec toolSpec) mcp.ToolHandlerFor[map[string]json.RawMessage, json.RawMessage] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, args map[string]json.RawMessage) (*mcp.CallToolResult, json.RawMessage, error) {
		if args == nil {
			args = map[string]json.RawMessage{}
		}
		if spec.prepare != nil {
			if err := spec.prepare(args); err != nil {
				return nil, nil, err
			}
		}
		body, err := json.Marshal(args)
		if err != nil {
			return nil, nil, fmt.Errorf("arguments: %w", err)
		}
		answer, err := t.call(ctx, spec.route, body)
		if err != nil {
			return nil, nil, err
		}
		structured, text, err := spec.result(answer)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, structured, nil
	}
}

func (t *tools) defaultBudget(args map[string]json.RawMessage) error {
	if _, ok := args["budget"]; !ok {
		args["budget"] = json.RawMessage(fmt.Sprint(t.budget))
	}
	return nil
}

// call serves body on the API route in process and returns the answer's
// JSON, or the API's error (which names the member at fault) as an error
// the SDK turns into an isError result.
func (t *tools) call(ctx context.Context, route string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, route, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	rec := &recorder{header: http.Header{}}
	t.api.ServeHTTP(rec, req)
	if rec.status == 0 || rec.status == http.StatusOK {
		return rec.body.Bytes(), nil
	}
	var env struct {
		Error *server.Error `json:"error"`
	}
	if err := json.Unmarshal(rec.body.Bytes(), &env); err != nil || env.Error == nil {
		return nil, fmt.Errorf("%s answered %d", route, rec.status)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, toolError{env.Error}
}

// toolError is an API error as a tool error: its message names the argument
// at fault ("budget: -1 is negative"), then the rule when there is one.
type toolError struct{ e *server.Error }

func (e toolError) Error() string {
	s := e.e.Message
	if e.e.Rule != "" {
		s += " (rule " + e.e.Rule + ")"
	}
	return s
}

func (e toolError) Unwrap() error { return e.e }

// recorder is the in-process http.ResponseWriter the tools hand the API.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// promptResult is an answer whose text is its "prompt" member.
func promptResult(answer []byte) (json.RawMessage, string, error) {
	var p struct {
		Prompt *string `json:"prompt"`
	}
	if err := json.Unmarshal(answer, &p); err != nil || p.Prompt == nil {
		return nil, "", errors.New("the answer has no prompt")
	}
	return json.RawMessage(answer), *p.Prompt, nil
}

// jsonResult is an answer whose text is its JSON.
func jsonResult(answer []byte) (json.RawMessage, string, error) {
	return json.RawMessage(answer), string(bytes.TrimSpace(answer)), nil
}

// leg is one provider's outcome in query_context's structured content,
// without the frames (they are in the prompt and the audit already).
type leg struct {
	Provider string            `json:"provider"`
	Status   string            `json:"status"`
	Accepted int               `json:"accepted"`
	Error    string            `json:"error,omitempty"`
	Excluded []json.RawMessage `json:"excluded,omitempty"`
}

// queryResult is the composition's own JSON ({prompt, citations, audit},
// as in ctxkit query --format json) plus one leg per provider.
func queryResult(answer []byte) (json.RawMessage, string, error) {
	var a server.QueryResult
	var raw struct {
		Composition map[string]json.RawMessage `json:"composition"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, "", fmt.Errorf("query answer: %w", err)
	}
	if err := json.Unmarshal(answer, &raw); err != nil || raw.Composition == nil {
		return nil, "", errors.New("query answer: no composition")
	}
	legs := make([]leg, 0, len(a.FanOut.Outcomes))
	for _, o := range a.FanOut.Outcomes {
		legs = append(legs, leg{Provider: o.Provider, Status: o.Status, Accepted: len(o.Frames), Error: o.Error, Excluded: o.Excluded})
	}
	lb, err := json.Marshal(legs)
	if err != nil {
		return nil, "", err
	}
	raw.Composition["legs"] = lb
	out, err := json.Marshal(raw.Composition)
	if err != nil {
		return nil, "", err
	}
	return out, a.Composition.Prompt, nil
}
