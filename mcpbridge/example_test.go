package mcpbridge_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/mcpbridge"
)

// An MCP server's resources, composed under a host's budget. The server is
// written with the SDK and served over Streamable HTTP on loopback; a real
// one is "mcp:stdio:CMD ..." or "mcp:https://...".
func ExampleRegister() {
	ctx := context.Background()
	s := mcp.NewServer(&mcp.Implementation{Name: "kb", Version: "1"}, nil)
	for uri, text := range map[string]string{
		"kb://rollback": "# Rolling back\n\nRevert the release tag and redeploy the previous build.\n",
		"kb://lunch":    "Lunch is at noon.\n",
	} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri[5:] + ".md", MIMEType: "text/markdown"},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: text}}}, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer ts.Close()

	h := host.New(nil)
	defer h.Close(ctx)
	target, err := mcpbridge.ParseTarget("mcp:" + ts.URL)
	if err != nil {
		log.Fatal(err)
	}
	p, err := mcpbridge.Register(h, "kb", target, nil)
	if err != nil {
		log.Fatal(err)
	}
	fo := h.QueryAllBudgeted(ctx, &frame.Query{Goal: "how do I roll back a release", MaxFrames: 4, MaxTokens: 200}, 200)
	res := fo.Compose(200, &compose.Options{})
	c := res.Citations[0]
	fmt.Println(fo.Outcomes[0].Status, c.Label, c.Provenance[0].Type, c.Provenance[0].URI, c.Provenance[0].By)
	fmt.Println("listed:", p.Report().Listed)
	// Output:
	// frames rollback.md:1-3 mcp-resource kb://rollback kb
	// listed: 2
}
