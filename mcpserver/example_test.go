package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

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
