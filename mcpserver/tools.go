package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tools runs each tool through the HTTP API route that does the same work,
// in process: the arguments are the route's request body.
type tools struct {
	api    *server.Handler
	budget int
	log    *slog.Logger // nil: panics are answered but not logged
	// shape bounds a call's arguments before they are decoded
	// (checkShape, toolShape).
	shape shapeLimits
	// running holds a slot per large call in progress, across sessions:
	// a call's memory is a multiple of its arguments, and calls beyond the
	// cores only wait for them anyway. A small call (a query_context
	// goal, waiting on providers) takes none.
	running chan struct{}
}

const (
	// callsPerCore is how many large calls run at once per core; more wait.
	callsPerCore = 4
	// largeArgs is the size from which a call's arguments make it large.
	largeArgs = 64 << 10
)

// toolSpec is one tool: its name, what it says about itself, and what it
// runs.
type toolSpec struct {
	name, title, desc string
	// run does the work and returns the structured content and the text
	// content, both already encoded (text is a JSON string).
	run func(ctx context.Context, args json.RawMessage) (structured, text json.RawMessage, err error)
}

func (t *tools) specs() []toolSpec {
	return []toolSpec{
		{name: "query_context", title: "Query context",
			desc: "Fan a goal out to ctxkit's providers (local files, CGP and MCP servers), audit each reply and compose the " +
				"evidence under one token budget. The text result is the fenced evidence to place in your prompt; " +
				"structuredContent adds the citations, the audit of every frame kept or dropped, and one outcome per provider.",
			run: t.query},
		{name: "compose_frames", title: "Compose frames",
			desc: "Compose CGP frames you already hold under a token budget: rank, pack and fence them, with an audit " +
				"of every frame. The text result is the fenced prompt.",
			run: t.route(api.PathCompose, promptResult)},
		{name: "assess_request", title: "Assess a model request",
			desc: "Count what a model request (Anthropic, OpenAI or Gemini body) uses of the model's context window, " +
				"lane by lane, what is left after the reserves, and whether to compact.",
			run: t.route(api.PathAssess, jsonResult)},
		{name: "quote_untrusted", title: "Quote untrusted text",
			desc: "Build a prompt from your own text and untrusted text; each untrusted part is quoted in a nonce fence " +
				"it cannot close. The text result is the prompt.",
			run: t.route(api.PathPrompt, promptResult)},
	}
}

func (t *tools) register(s *mcp.Server) error {
	calls := map[string]toolCall{}
	for _, spec := range t.specs() {
		in, err := loadSchema(spec.name + ".in")
		if err != nil {
			return err
		}
		out, err := loadSchema(spec.name + ".out")
		if err != nil {
			return err
		}
		resolved, err := in.Resolve(nil)
		if err != nil {
			return fmt.Errorf("mcpserver: schema %s.in: %w", spec.name, err)
		}
		tool := &mcp.Tool{Name: spec.name, Title: spec.title, Description: spec.desc, InputSchema: in, OutputSchema: out,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(spec.name == "query_context")}}
		call := t.body(spec, resolved)
		calls[spec.name] = call
		s.AddTool(tool, call.handler)
	}
	s.AddReceivingMiddleware(encodedCalls(calls))
	return nil
}

// body returns the tool's call: it checks the call's arguments against
// the tool's input schema, then runs the tool. Bad arguments and the API's
// refusals are tool results with isError set; only a cancelled call is a
// protocol error. The output is ctxkit's own encoding, written once (the
// tests check it against the output schema).
func (t *tools) body(spec toolSpec, in *jsonschema.Resolved) toolCall {
	return func(ctx context.Context, args json.RawMessage) (res *encodedResult, err error) {
		// A panic here is a bug in ctxkit's own code (the host outside a
		// provider, the composer): it fails this call, as the HTTP API
		// answers 500, and the session goes on serving the others.
		defer func() {
			if v := recover(); v != nil {
				if t.log != nil {
					t.log.Error("tool panic", "tool", spec.name, "panic", fmt.Sprint(v))
				}
				res, err = toolFailure(errors.New("internal error")), nil
			}
		}()
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		if err := checkShape(args, t.shape); err != nil {
			return toolFailure(fmt.Errorf("arguments: %w", err)), nil
		}
		if len(args) >= largeArgs {
			select {
			case t.running <- struct{}{}:
				defer func() { <-t.running }()
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			return toolFailure(fmt.Errorf("arguments: %w", err)), nil
		}
		if err := in.Validate(v); err != nil {
			return toolFailure(fmt.Errorf("arguments: %w", err)), nil
		}
		structured, text, err := spec.run(ctx, args)
		if err != nil {
			if ce := ctx.Err(); ce != nil {
				return nil, ce
			}
			return toolFailure(err), nil
		}
		return &encodedResult{text: text, structured: structured}, nil
	}
}

func toolFailure(err error) *encodedResult {
	return &encodedResult{text: jsonString(err.Error()), isError: true}
}

// route returns a tool body that runs an API route with the arguments as
// its request body and turns the answer into the result with result.
func (t *tools) route(path string, result func([]byte) (json.RawMessage, json.RawMessage, error)) func(context.Context, json.RawMessage) (json.RawMessage, json.RawMessage, error) {
	return func(ctx context.Context, args json.RawMessage) (json.RawMessage, json.RawMessage, error) {
		answer, err := t.call(ctx, path, args)
		if err != nil {
			return nil, nil, err
		}
		return result(answer)
	}
}

// query runs query_context: the query route's work (server.Handler.Query),
// its composition encoded once as ctxkit query --format json encodes it,
// plus one leg per provider. The prompt is escaped once: the text content
// reuses the encoded "prompt" member of the structured content.
func (t *tools) query(ctx context.Context, args json.RawMessage) (json.RawMessage, json.RawMessage, error) {
	var req api.QueryRequest
	if err := json.Unmarshal(args, &req); err != nil {
		return nil, nil, fmt.Errorf("arguments: %w", err)
	}
	if req.Budget == 0 {
		req.Budget = t.budget
	}
	res, fo, err := t.api.Query(ctx, &req)
	if err != nil {
		var se *api.Error
		if errors.As(err, &se) {
			return nil, nil, toolError{se}
		}
		return nil, nil, err
	}
	legs := make([]leg, 0, len(fo.Outcomes))
	for i := range fo.Outcomes {
		o := &fo.Outcomes[i]
		l := leg{Provider: o.Provider, Status: o.Status.String(), Accepted: len(o.Frames), Error: o.Error()}
		for _, e := range o.Excluded {
			b, err := json.Marshal(e)
			if err != nil {
				return nil, nil, err
			}
			l.Excluded = append(l.Excluded, b)
		}
		legs = append(legs, l)
	}
	lb, err := json.Marshal(legs)
	if err != nil {
		return nil, nil, err
	}
	// {"prompt":...,"citations":...,"audit":...} + ,"legs":[...], written
	// by compose's own encoder (what MarshalJSON writes, without its
	// reflection) into a buffer with room for the legs.
	out, err := res.AppendJSON(make([]byte, 0, 2*len(res.Prompt)+2048+len(lb)))
	if err != nil {
		return nil, nil, fmt.Errorf("encode result: %w", err)
	}
	prompt := promptMember(out, res.Prompt)
	out = append(out[:len(out)-1], `,"legs":`...)
	out = append(out, lb...)
	return append(out, '}'), prompt, nil
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
		// Compact, as every encodedResult is: the stdio connection writes
		// it on one line as it is.
		var b bytes.Buffer
		if err := json.Compact(&b, rec.body.Bytes()); err != nil {
			return nil, fmt.Errorf("%s answered: %w", route, err)
		}
		return b.Bytes(), nil
	}
	var env struct {
		Error *api.Error `json:"error"`
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
type toolError struct{ e *api.Error }

func (e toolError) Error() string {
	s := e.e.Message
	if e.e.Rule != "" {
		s += " (rule " + string(e.e.Rule) + ")"
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

// promptResult is an answer whose text is its "prompt" member. The API's
// compose and prompt answers lead with it (compose.Result's encoding), so
// it is found without decoding the whole answer a second time.
func promptResult(answer []byte) (json.RawMessage, json.RawMessage, error) {
	if m, ok := leadingPrompt(answer); ok {
		return json.RawMessage(answer), m, nil
	}
	var p struct {
		Prompt json.RawMessage `json:"prompt"`
	}
	if err := json.Unmarshal(answer, &p); err != nil || len(p.Prompt) == 0 || p.Prompt[0] != '"' {
		return nil, nil, errors.New("the answer has no prompt")
	}
	return json.RawMessage(answer), p.Prompt, nil
}

// jsonResult is an answer whose text is its JSON.
func jsonResult(answer []byte) (json.RawMessage, json.RawMessage, error) {
	return json.RawMessage(answer), jsonString(string(answer)), nil
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
