package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawConn serves mcpserver.NewServer over an in-memory transport and returns the
// client end as a raw JSON-RPC connection, initialized at version.
func rawConn(t *testing.T, version string) mcp.Connection {
	t.Helper()
	ctx := context.Background()
	conn, err := serve(t, nil, nil).Connect(ctx)
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
