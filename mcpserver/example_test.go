package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/mcpserver"
)

// A Go host serves its providers to an MCP client; here the client is the
// SDK's own, over an in-memory transport.
func ExampleNewServer() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "retry.md"), []byte("# Retries\n\nRequests are retried three times.\n"), 0o644)

	ix, err := files.Build(ctx, dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	h := host.New(nil)
	defer h.Close(ctx)
	_ = h.AddInProcess("docs", files.New(ix))

	srv, err := mcpserver.NewServer(h, &mcpserver.ServerOptions{Budget: 300, Roots: []string{dir}})
	if err != nil {
		log.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, st, nil)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_context", Arguments: map[string]any{"goal": "how often are requests retried"}})
	if err != nil {
		log.Fatal(err)
	}
	out := res.StructuredContent.(map[string]any)
	fmt.Println("error:", res.IsError)
	fmt.Println("cited:", out["citations"].([]any)[0].(map[string]any)["label"])
	fmt.Println("budget:", out["audit"].(map[string]any)["budget"])
	// Output:
	// error: false
	// cited: retry.md:1-3
	// budget: 300
}

// ctxkit mcp serves one MCP session on its stdin and stdout; here the
// client's end is a pair of pipes. Closing the input ends the session (and
// cancels the calls still running, as a client that went away would).
func ExampleServeStdio() {
	srv, err := mcpserver.NewServer(nil, &mcpserver.ServerOptions{Version: "1"})
	if err != nil {
		log.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- mcpserver.ServeStdio(context.Background(), srv, inR, outW) }()

	answers := bufio.NewScanner(outR)
	answers.Buffer(nil, 1<<20)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agent","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"untrusted":"hi"}],"key":"0123456789abcdef"}}}`,
	} {
		fmt.Fprintln(inW, line)
		if strings.Contains(line, `"id"`) && answers.Scan() {
			fmt.Printf("%.60s\n", answers.Text())
		}
	}
	inW.Close()
	fmt.Println("session ended:", <-done)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text",
	// session ended: <nil>
}
