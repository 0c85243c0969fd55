package main

import (
	"context"
	"strings"
	"testing"
)

func TestConfigMCPProvider(t *testing.T) {
	c, err := parseServeConfig([]byte(`{"providers": [{"id": "ev", "mcp": "mcp:stdio:npx -y server", "mcp_tool": "echo:message"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.newHost(context.Background(), nil)
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
		c, err := parseServeConfig([]byte(cfg))
		if err == nil {
			var h interface{ Close(context.Context) error }
			h, err = c.newHost(context.Background(), nil)
			if err == nil {
				_ = h.Close(context.Background())
			}
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", cfg, err, want)
		}
	}
}

func TestConfigNewHostRefusesBadProviders(t *testing.T) {
	for _, doc := range []string{
		`{"providers":[{"id":"d","files":"/nonexistent/ctxkit/dir"}]}`,
		`{"providers":[{"id":"w","url":"http://192.0.2.1/cgp"}]}`,
		`{"providers":[{"id":"w","url":"https://wiki.example/cgp","token_env":"CTXKIT_TEST_UNSET_TOKEN"}]}`,
	} {
		c, err := parseServeConfig([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if h, err := c.newHost(context.Background(), nil); err == nil {
			h.Close(context.Background())
			t.Errorf("%s: accepted", doc)
		}
	}
}
