package mcpbridge

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxkit/ctxkit/host"
)

// Register adds the MCP server at target to h under id, served in
// process by a Provider. The connection is opened by the first query that
// passes the host's consent gate.
func Register(h *host.Host, id string, target Target, opts *Options) (*Provider, error) {
	p, err := New(id, target, opts)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", id, err)
	}
	if err := h.AddInProcessAt(id, target.endpoint(), p); err != nil {
		_ = p.Shutdown(context.Background())
		return nil, err
	}
	return p, nil
}

// ParseTool parses a tool spec, NAME or NAME:ARG, into the Options fields
// Tool and ToolArgument.
func ParseTool(spec string) (name, arg string, err error) {
	name, arg, _ = strings.Cut(spec, ":")
	if strings.TrimSpace(name) == "" {
		return "", "", fmt.Errorf("%w: tool spec %q names no tool (want NAME or NAME:ARG)", ErrBadTarget, spec)
	}
	return name, arg, nil
}
