package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/server"
)

func TestParseConfig(t *testing.T) {
	c, err := parseServeConfig([]byte(`{"limits":{"max_body_bytes":1000,"max_frames":10,"timeout":"2s"},
		"providers":[{"id":"docs","files":"./docs"},{"id":"t","command":["prov","--stdio"]},{"id":"w","url":"https://x.example/cgp","token_env":"W"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var o server.Options
	c.Limits.apply(&o)
	if o.MaxBodyBytes != 1000 || o.MaxFrames != 10 || o.Timeout != 2*time.Second {
		t.Fatalf("limits applied: %+v", o)
	}
	if len(c.Providers) != 3 || c.Providers[2].TokenEnv != "W" {
		t.Fatalf("providers: %+v", c.Providers)
	}
	for _, bad := range []struct{ doc, want string }{
		{`{"limitz":{}}`, "unknown field"},
		{`{"providers":[{"files":"a"}]}`, "id is required"},
		{`{"providers":[{"id":"a","files":"a"},{"id":"a","files":"b"}]}`, "duplicate id"},
		{`{"providers":[{"id":"a","files":"a","url":"https://x"}]}`, "exactly one"},
		{`{"providers":[{"id":"a"}]}`, "exactly one"},
		{`{"providers":[{"id":"a","files":"a","token_env":"X"}]}`, "token_env"},
		{`{"limits":{"timeout":"soon"}}`, "duration"},
		{`{"limits":{"timeout":"-1s"}}`, "negative"},
		{`{"limits":{"max_frames":-1}}`, "negative"},
		{`{} {}`, "unexpected data"},
		{`{"providers":[{"id":"a","files":"a","mcp_start_timeout":"5s"}]}`, "applies only to mcp"},
		{`{"providers":[{"id":"a","mcp":"mcp:stdio:x","mcp_start_timeout":"-5s"}]}`, "negative"},
	} {
		if _, err := parseServeConfig([]byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want one containing %q", bad.doc, err, bad.want)
		}
	}
}

func TestLoadConfigResolvesRelativePaths(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ctxkit.json")
	if err := os.WriteFile(p, []byte(`{"providers":[{"id":"d","files":"docs"},{"id":"s","command":["./bin/prov"]},{"id":"p","command":["python3"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := loadServeConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if c.Providers[0].Files != filepath.Join(dir, "docs") || c.Providers[1].Command[0] != filepath.Join(dir, "bin/prov") || c.Providers[2].Command[0] != "python3" {
		t.Fatalf("paths: %+v", c.Providers)
	}
	if _, err := loadServeConfig(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

// TestConfigMemoryLimits: the config file's memory limits reach the
// handler's options, and negative values are refused.
func TestConfigMemoryLimits(t *testing.T) {
	c, err := parseServeConfig([]byte(`{"limits":{"max_body_bytes_in_flight":33554432,"max_connections":64}}`))
	if err != nil {
		t.Fatal(err)
	}
	var o server.Options
	c.Limits.apply(&o)
	if o.MaxBodyBytesInFlight != 32<<20 || o.MaxConnections != 64 {
		t.Fatalf("applied %d, %d", o.MaxBodyBytesInFlight, o.MaxConnections)
	}
	for _, bad := range []string{`{"limits":{"max_connections":-1}}`, `{"limits":{"max_body_bytes_in_flight":-5}}`} {
		if _, err := parseServeConfig([]byte(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}
