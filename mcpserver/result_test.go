package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// viaJSON is s after a trip through encoding/json (invalid UTF-8 becomes
// U+FFFD, byte by byte).
func viaJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// randomText mixes what JSON must escape, what HTML escaping would touch,
// multi-byte runes and invalid UTF-8.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", " ", "\n", "\t", `"`, `\`, "<", ">", "&", "\u2028", "é", "🙂", "\x00", "\x1f", "\xff", "</frame>", `\"`}
	var b strings.Builder
	for range r.IntN(40) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestEncodedResultMatchesSDK checks the hand-written wire form against the
// SDK's own encoding of the same result, for texts full of characters JSON
// escapes, with and without structured content, isError, _meta and the
// per-request protocol's resultType.
func TestEncodedResultMatchesSDK(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 1))
	for i := range 500 {
		text := randomText(r)
		e := &encodedResult{text: jsonString(text), isError: i%3 == 0, complete: i%4 == 0}
		if i%2 == 0 {
			e.structured = json.RawMessage(`{"prompt":` + string(jsonString(text)) + `,"n":[1,2,{"k":null}]}`)
		}
		if i%5 == 0 {
			e.Meta = mcp.Meta{mcp.MetaKeyServerInfo: map[string]any{"name": "ctxkit", "version": randomText(r)}}
		}
		got, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		sdk, err := e.callToolResult()
		if err != nil {
			t.Fatal(err)
		}
		if sdk.Content[0].(*mcp.TextContent).Text != viaJSON(t, text) {
			t.Fatalf("text %q decoded as %q", text, sdk.Content[0].(*mcp.TextContent).Text)
		}
		sdk.Meta = e.Meta
		want, err := json.Marshal(sdk)
		if err != nil {
			t.Fatal(err)
		}
		if e.complete {
			want = append(want[:len(want)-1], `,"resultType":"complete"}`...)
		}
		if !sameJSON(t, got, want) {
			t.Fatalf("text %q:\n got  %s\n want %s", text, got, want)
		}
		var back mcp.CallToolResult
		if err := json.Unmarshal(got, &back); err != nil || back.IsError != e.isError {
			t.Fatalf("the SDK reads %s back as %+v: %v", got, back, err)
		}
	}
}

// TestEncodedResultNoHTMLEscapes checks that the prompt reaches the client
// with its fence characters as they are, not as six-byte \u003c escapes.
func TestEncodedResultNoHTMLEscapes(t *testing.T) {
	b, err := (&encodedResult{text: jsonString(`<frame provider="files">x & y</frame>`)}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `\u003c`) || !strings.Contains(string(b), `<frame provider=\"files\">x & y</frame>`) {
		t.Fatalf("encoded %s", b)
	}
}

func TestPromptMember(t *testing.T) {
	for _, prompt := range []string{"", `"`, `\`, `a\"b`, `\\"`, "line\nline", "<x>&", "é🙂"} {
		obj, err := json.Marshal(map[string]any{"prompt": prompt})
		if err != nil {
			t.Fatal(err)
		}
		obj = append(obj[:len(obj)-1], `,"citations":["\"}"]}`...)
		var got string
		if err := json.Unmarshal(promptMember(obj, prompt), &got); err != nil || got != prompt {
			t.Errorf("prompt %q: member %s = %q, %v", prompt, promptMember(obj, prompt), got, err)
		}
	}
	// An object that does not lead with the prompt is not sliced.
	if got := string(promptMember([]byte(`{"citations":[],"prompt":"p"}`), "q")); got != `"q"` {
		t.Errorf("got %s, want the prompt encoded anew", got)
	}
}

func FuzzPromptMember(f *testing.F) {
	f.Add("", "")
	f.Add(`a"b`, `x\`)
	f.Add("line\n\\\"", "</frame>")
	f.Fuzz(func(t *testing.T, prompt, other string) {
		obj, err := json.Marshal(struct {
			Prompt string `json:"prompt"`
			Other  string `json:"other"`
		}{prompt, other})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := json.Unmarshal(promptMember(obj, prompt), &got); err != nil || got != viaJSON(t, prompt) {
			t.Fatalf("prompt %q: %q, %v", prompt, got, err)
		}
	})
}

// rawConn serves NewServer over an in-memory transport and returns the
// client end as a raw JSON-RPC connection, initialized at version.
func rawConn(t *testing.T, version string) mcp.Connection {
	t.Helper()
	srv, err := NewServer(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	rawCall(t, conn, 0, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	note, _ := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err := conn.Write(ctx, note); err != nil {
		t.Fatal(err)
	}
	return conn
}

func rawCall(t *testing.T, conn mcp.Connection, id int64, method, params string) *jsonrpc.Response {
	t.Helper()
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	msg, err := jsonrpc.DecodeMessage([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := conn.Write(ctx, msg); err != nil {
		t.Fatal(err)
	}
	for {
		in, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if resp, ok := in.(*jsonrpc.Response); ok {
			return resp
		}
	}
}

// TestToolsCallWire reads tools/call answers as the bytes a client gets:
// the text content is the structured prompt, no HTML escapes, no
// resultType in a classic session, and in the per-request protocol the
// resultType and serverInfo the SDK puts on its own results.
func TestToolsCallWire(t *testing.T) {
	conn := rawConn(t, "2025-06-18")
	args := `{"name":"quote_untrusted","arguments":{"parts":[{"text":"Say <b> & go"},{"untrusted":"ignore \"all\"\n"}]}`
	resp := rawCall(t, conn, 1, "tools/call", args+"}")
	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		Structured struct {
			Prompt string `json:"prompt"`
		} `json:"structuredContent"`
		ResultType *string        `json:"resultType"`
		Meta       map[string]any `json:"_meta"`
		IsError    bool           `json:"isError"`
	}
	if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil {
		t.Fatalf("answer %s, %v", resp.Result, resp.Error)
	}
	if len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != res.Structured.Prompt ||
		!strings.Contains(res.Structured.Prompt, "Say <b> & go") || res.IsError {
		t.Fatalf("result %s", resp.Result)
	}
	if strings.Contains(string(resp.Result), `\u003c`) || res.ResultType != nil || res.Meta != nil {
		t.Errorf("classic session result %s: want no HTML escapes, resultType or _meta", resp.Result)
	}

	meta := `,"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"2026-07-28","` + mcp.MetaKeyClientCapabilities + `":{}}}`
	resp = rawCall(t, conn, 2, "tools/call", args+meta)
	res.ResultType, res.Meta = nil, nil
	if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil {
		t.Fatalf("answer %s, %v", resp.Result, resp.Error)
	}
	if res.ResultType == nil || *res.ResultType != "complete" || res.Meta[mcp.MetaKeyServerInfo] == nil {
		t.Errorf("per-request result %s: want resultType complete and serverInfo", resp.Result)
	}

	resp = rawCall(t, conn, 3, "tools/call", `{"name":"quote_untrusted","arguments":{"parts":[]}}`)
	if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "parts") {
		t.Errorf("bad arguments: %s, %v; want isError naming parts", resp.Result, resp.Error)
	}
	if resp = rawCall(t, conn, 4, "tools/call", `{"name":"no_such_tool","arguments":{}}`); resp.Error == nil {
		t.Errorf("unknown tool answered %s, want a protocol error", resp.Result)
	}
}
