package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/server"
)

// serveConfig is the JSON file read by `ctxkit serve --config FILE`:
//
//	{
//	  "limits": {"max_body_bytes": 8388608, "max_frames": 5000, "timeout": "30s",
//	             "max_body_bytes_in_flight": 134217728, "max_connections": 1024},
//	  "providers": [
//	    {"id": "docs", "files": "./docs"},
//	    {"id": "tickets", "command": ["./tickets-provider", "--stdio"]},
//	    {"id": "wiki", "url": "https://wiki.example/cgp", "token_env": "WIKI_TOKEN"}
//	  ]
//	}
//
// A relative "files" directory or command path is resolved against the
// config file's directory. Credentials are never written in the file: a
// provider names the environment variable that holds its bearer token.
type serveConfig struct {
	// Limits are the request limits; zero fields keep the defaults.
	Limits configLimits `json:"limits"`
	// Providers are the providers POST /v1/query fans out to, in order.
	Providers []providerConfig `json:"providers"`
	// ConsentStore is the consent journal egress providers are checked
	// against (the file `ctxkit consent grant` writes). Default: the
	// user's default journal if it exists, else nothing is granted.
	ConsentStore string `json:"consent_store,omitempty"`
	// Store is the shared state of replicated services: a postgres://
	// URL (docs/deploy.md). When set it replaces ConsentStore; the
	// command that reads the file opens it (see Consent).
	Store string `json:"store,omitempty"`
	// Consent, when set, is the consent store newHost uses instead of
	// opening ConsentStore (ctxkit serve sets it to the shared store).
	Consent *consent.Store `json:"-"`
	// QueryTimeout bounds each provider leg of a fan-out, its handshake and
	// its query each (default 30s).
	QueryTimeout jsonDuration `json:"query_timeout,omitempty"`
}

// configLimits are the request limits of a config file; zero means the default.
type configLimits struct {
	// MaxBodyBytes is server.Options.MaxBodyBytes.
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`
	// MaxFrames is server.Options.MaxFrames.
	MaxFrames int `json:"max_frames,omitempty"`
	// Timeout is server.Options.Timeout, as a duration string ("30s").
	Timeout jsonDuration `json:"timeout,omitempty"`
	// MaxBodyBytesInFlight is server.Options.MaxBodyBytesInFlight.
	MaxBodyBytesInFlight int64 `json:"max_body_bytes_in_flight,omitempty"`
	// MaxConnections is server.Options.MaxConnections.
	MaxConnections int `json:"max_connections,omitempty"`
}

// negative names the first limit set below zero, by its serve flag and
// its config member, or returns "", "" when none is.
func (l configLimits) negative() (flag, member string) {
	switch {
	case l.MaxBodyBytes < 0:
		return "max-body", "max_body_bytes"
	case l.MaxFrames < 0:
		return "max-frames", "max_frames"
	case l.Timeout < 0:
		return "timeout", "timeout"
	case l.MaxBodyBytesInFlight < 0:
		return "max-body-in-flight", "max_body_bytes_in_flight"
	case l.MaxConnections < 0:
		return "max-conns", "max_connections"
	}
	return "", ""
}

// apply copies the non-zero limits into o.
func (l configLimits) apply(o *server.Options) {
	if l.MaxBodyBytes > 0 {
		o.MaxBodyBytes = l.MaxBodyBytes
	}
	if l.MaxFrames > 0 {
		o.MaxFrames = l.MaxFrames
	}
	if l.Timeout > 0 {
		o.Timeout = time.Duration(l.Timeout)
	}
	if l.MaxBodyBytesInFlight > 0 {
		o.MaxBodyBytesInFlight = l.MaxBodyBytesInFlight
	}
	if l.MaxConnections > 0 {
		o.MaxConnections = l.MaxConnections
	}
}

// providerConfig configures one provider of /v1/query. Exactly one of
// Files, Command and URL is set.
type providerConfig struct {
	// ID is the provider id used in frame identities and citations.
	ID string `json:"id"`
	// Files is a directory served by the built-in files provider.
	Files string `json:"files,omitempty"`
	// Command is the argv of a CGP provider spoken to over stdio.
	Command []string `json:"command,omitempty"`
	// URL is a CGP provider over HTTP (https://, or http:// on loopback).
	URL string `json:"url,omitempty"`
	// TokenEnv names the environment variable holding the provider's
	// credential: the bearer token for URL or for an mcp:https:// MCP
	// server, or an entry of the same name passed to the Command child. The token itself is never logged, and
	// it is scrubbed from everything derived from the provider.
	TokenEnv string `json:"token_env,omitempty"`
	// MCP is an MCP server bridged as a provider, spelled as on the
	// command line: "mcp:stdio:CMD [ARGS...]" or "mcp:https://HOST/PATH".
	MCP string `json:"mcp,omitempty"`
	// MCPTool names a search-like tool of the MCP server to call with the
	// goal, NAME or NAME:ARG (see mcpbridge.ParseTool).
	MCPTool string `json:"mcp_tool,omitempty"`
	// MCPStartTimeout is a local (mcp:stdio:) server's start-up allowance,
	// as a duration string (default "2m").
	MCPStartTimeout jsonDuration `json:"mcp_start_timeout,omitempty"`
}

// jsonDuration is a time.Duration written in JSON as a Go duration string
// ("30s", "1m30s").
type jsonDuration time.Duration

// UnmarshalJSON reads a duration string.
func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	if v < 0 {
		return fmt.Errorf("duration: %q is negative", s)
	}
	*d = jsonDuration(v)
	return nil
}

// loadServeConfig reads and checks a config file, resolving relative paths
// against its directory.
func loadServeConfig(path string) (*serveConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := parseServeConfig(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if c.ConsentStore != "" && !filepath.IsAbs(c.ConsentStore) {
		c.ConsentStore = filepath.Join(dir, c.ConsentStore)
	}
	if p, ok := strings.CutPrefix(c.Store, "file:"); ok && p != "" && !filepath.IsAbs(p) {
		c.Store = "file:" + filepath.Join(dir, p)
	}
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Files != "" && !filepath.IsAbs(p.Files) {
			p.Files = filepath.Join(dir, p.Files)
		}
		if len(p.Command) > 0 && !filepath.IsAbs(p.Command[0]) && filepath.Base(p.Command[0]) != p.Command[0] {
			p.Command[0] = filepath.Join(dir, p.Command[0])
		}
	}
	return c, nil
}

// parseServeConfig decodes a config document, refusing unknown members (a typo
// in a config file should not be silently ignored) and checking providers.
func parseServeConfig(b []byte) (*serveConfig, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c serveConfig
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode: unexpected data after the JSON object")
	}
	if flag, member := c.Limits.negative(); flag != "" {
		return nil, fmt.Errorf("limits: %s (the --%s flag) must not be negative", member, flag)
	}
	seen := map[string]bool{}
	for i, p := range c.Providers {
		if p.ID == "" {
			return nil, fmt.Errorf("providers[%d]: id is required", i)
		}
		if seen[p.ID] {
			return nil, fmt.Errorf("providers[%d]: duplicate id %q", i, p.ID)
		}
		seen[p.ID] = true
		n := 0
		for _, set := range []bool{p.Files != "", len(p.Command) > 0, p.URL != "", p.MCP != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("providers[%d] (%s): set exactly one of files, command, url, mcp", i, p.ID)
		}
		if p.MCPStartTimeout < 0 {
			return nil, fmt.Errorf("providers[%d] (%s): mcp_start_timeout must not be negative", i, p.ID)
		}
		if p.MCPStartTimeout != 0 && p.MCP == "" {
			return nil, fmt.Errorf("providers[%d] (%s): mcp_start_timeout applies only to mcp providers", i, p.ID)
		}
		if p.MCPTool != "" && p.MCP == "" {
			return nil, fmt.Errorf("providers[%d] (%s): mcp_tool applies only to mcp providers", i, p.ID)
		}
		if p.TokenEnv != "" && p.Files != "" {
			return nil, fmt.Errorf("providers[%d] (%s): token_env applies only to url and command providers", i, p.ID)
		}
	}
	return &c, nil
}
