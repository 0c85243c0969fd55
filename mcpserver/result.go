package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// encodedResult is a tools/call result whose members are already compact
// JSON: the text content as an encoded string, the structured content as
// ctxkit's own encoding. Handed to the SDK as an mcp.Result, it is written as is; the
// SDK's JSON-RPC layer compacts a json.Marshaler's output once per marshal
// level, and an *mcp.CallToolResult adds two such levels and an escape of
// the text on top of that (see BENCHMARKS.md, issue 17).
type encodedResult struct {
	mcp.ResultBase
	text       json.RawMessage
	structured json.RawMessage
	isError    bool
	// complete writes resultType "complete", which the per-request
	// protocol (SEP-2575) puts on every result; the SDK sets it only on its
	// own result types.
	complete bool
	// held, when set, keeps the encoding for the stdio connection or the
	// HTTP response that writes it, and MarshalJSON returns its token (see heldResults), the
	// same token however often it is called.
	held  *heldResults
	token []byte
}

// The names and marks MarshalJSON writes around a result's members.
const (
	resultOpen       = `{"content":[{"type":"text","text":`
	resultTextClose  = `}]`
	resultStructured = `,"structuredContent":`
	resultIsError    = `,"isError":true`
	resultComplete   = `,"resultType":"complete"`
	resultMeta       = `,"_meta":`
	resultFraming    = len(resultOpen) + len(resultTextClose) + len(resultStructured) + len(resultIsError) +
		len(resultComplete) + len(resultMeta) + len("}")
)

// MarshalJSON writes the CallToolResult wire shape: one text content, the
// structured content when there is one, isError and resultType when set,
// and any _meta the SDK added (its serverInfo in the per-request protocol).
func (r *encodedResult) MarshalJSON() ([]byte, error) {
	if r.token != nil {
		return r.token, nil
	}
	var meta []byte
	if len(r.Meta) > 0 {
		m, err := json.Marshal(r.Meta)
		if err != nil {
			return nil, fmt.Errorf("mcpserver: encode _meta: %w", err)
		}
		meta = m
	}
	// One allocation: the members' bytes and every name and mark around
	// them (a result of 20-30 KB grew once more for its _meta before).
	b := make([]byte, 0, len(r.text)+len(r.structured)+len(meta)+resultFraming)
	b = append(b, resultOpen...)
	b = append(b, r.text...)
	b = append(b, resultTextClose...)
	if len(r.structured) > 0 {
		b = append(b, resultStructured...)
		b = append(b, r.structured...)
	}
	if r.isError {
		b = append(b, resultIsError...)
	}
	if r.complete {
		b = append(b, resultComplete...)
	}
	if meta != nil {
		b = append(b, resultMeta...)
		b = append(b, meta...)
	}
	b = append(b, '}')
	if r.held != nil {
		r.token = r.held.hold(b)
		return r.token, nil
	}
	return b, nil
}

// callToolResult is r as the SDK's own result type, for the calls the SDK
// answers itself.
func (r *encodedResult) callToolResult() (*mcp.CallToolResult, error) {
	var text string
	if err := json.Unmarshal(r.text, &text); err != nil {
		return nil, fmt.Errorf("mcpserver: text content: %w", err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: r.isError}
	if len(r.structured) > 0 {
		res.StructuredContent = r.structured
	}
	return res, nil
}

// perRequestProtocol is the first protocol version with per-request
// metadata (SEP-2575).
const perRequestProtocol = "2026-07-28"

// toolCall runs one tool on a call's arguments.
type toolCall func(ctx context.Context, args json.RawMessage) (*encodedResult, error)

// handler is c as an SDK tool handler: it serves the calls encodedCalls
// leaves to the SDK.
func (c toolCall) handler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args json.RawMessage
	if req != nil && req.Params != nil {
		args = req.Params.Arguments
	}
	res, err := c(ctx, args)
	if err != nil {
		return nil, err
	}
	return res.callToolResult()
}

// encodedCalls is a receiving middleware that answers tools/call for
// ctxkit's own tools with their encodedResult. Everything else goes on to
// the SDK: other methods and unknown tools (a protocol error there).
func encodedCalls(calls map[string]toolCall) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ct, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || ct.Params == nil {
				return next(ctx, method, req)
			}
			call, ok := calls[ct.Params.Name]
			if !ok {
				return next(ctx, method, req)
			}
			var res *encodedResult
			var err error
			session, _ := ctx.Value(sessionKey{}).(*stdioConn)
			if session != nil {
				res, err = session.workers.call(ctx, call, ct.Params.Arguments)
			} else {
				res, err = call(ctx, ct.Params.Arguments)
			}
			if err != nil {
				return nil, err
			}
			// The SDK's own test for the per-request protocol: a version
			// in _meta from 2026-07-28 on (dates compare as strings).
			v, _ := ct.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
			res.complete = v >= perRequestProtocol
			if session != nil {
				res.held = &session.held
			} else if held, ok := ctx.Value(heldKey{}).(*heldResults); ok {
				res.held = held
			}
			return res, nil
		}
	}
}

// jsonString is s as encoding/json writes it with HTML escaping off.
func jsonString(s string) json.RawMessage {
	return cgpjson.AppendStdString(nil, s)
}

// promptMember returns the encoded "prompt" member that leads obj, the
// encoding of compose.Result, so the prompt is escaped once for both the
// structured and the text content; when obj does not lead with it, prompt
// is encoded anew.
func promptMember(obj []byte, prompt string) json.RawMessage {
	if m, ok := leadingPrompt(obj); ok {
		return m
	}
	return jsonString(prompt)
}

// leadingPrompt returns the encoded string of the "prompt" member that
// leads the compact object obj, found without decoding the rest of obj;
// false when obj does not lead with one.
func leadingPrompt(obj []byte) (json.RawMessage, bool) {
	const lead = `{"prompt":"`
	if !bytes.HasPrefix(obj, []byte(lead)) {
		return nil, false
	}
	for i := len(lead); i < len(obj); i++ {
		switch obj[i] {
		case '\\':
			i++
		case '"':
			return json.RawMessage(obj[len(lead)-1 : i+1]), true
		}
	}
	return nil, false
}
