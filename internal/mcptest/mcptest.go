// Package mcptest holds what the tests of ctxkit's MCP server read out of
// its answers, so the server's own tests and the CLI's end-to-end tests
// see a tool result the same way.
package mcptest

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Text joins the text contents of a tool result in order, skipping any
// content that is not text.
func Text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
