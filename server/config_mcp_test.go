package server

import (
	"context"
	"strings"
	"testing"
)

func TestConfigMCPProvider(t *testing.T) {
	c, err := parseConfig([]byte(`{"providers": [{"id": "ev", "mcp": "mcp:stdio:npx -y server", "mcp_tool": "echo:message"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.NewHost(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if ids := h.IDs(); len(ids) != 1 || ids[0] != "ev" {
		t.Fatalf("ids %v", ids)
	}
	for cfg, want := range map[string]string{
		`{"providers": [{"id": "a", "url": "https://x/", "mcp_tool": "echo"}]}`:  "mcp_tool applies only to mcp",
		`{"providers": [{"id": "a", "mcp": "mcp:stdio:x", "command": ["y"]}]}`:   "exactly one",
		`{"providers": [{"id": "a", "mcp": "mcp:http://h.example/mcp"}]}`:        "loopback",
		`{"providers": [{"id": "a", "mcp": "mcp:stdio:x", "mcp_tool": ":arg"}]}`: "names no tool",
	} {
		c, err := parseConfig([]byte(cfg))
		if err == nil {
			var h interface{ Close(context.Context) error }
			h, err = c.NewHost(context.Background(), nil)
			if err == nil {
				_ = h.Close(context.Background())
			}
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", cfg, err, want)
		}
	}
}
