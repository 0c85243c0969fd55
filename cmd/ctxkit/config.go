package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/mcpbridge"
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
	if c.Limits.MaxBodyBytes < 0 || c.Limits.MaxFrames < 0 || c.Limits.MaxBodyBytesInFlight < 0 || c.Limits.MaxConnections < 0 {
		return nil, fmt.Errorf("limits: negative values are not allowed")
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
		if p.MCPTool != "" && p.MCP == "" {
			return nil, fmt.Errorf("providers[%d] (%s): mcp_tool applies only to mcp providers", i, p.ID)
		}
		if p.TokenEnv != "" && p.Files != "" {
			return nil, fmt.Errorf("providers[%d] (%s): token_env applies only to url and command providers", i, p.ID)
		}
	}
	return &c, nil
}

// newHost builds the host that serves /v1/query from the configured
// providers: files directories are indexed now (progress, if any, goes to
// progress), stdio children are registered (and spawned on first use),
// HTTP providers get their bearer token from the named environment
// variable. The caller owns the host and must Close it.
func (c *serveConfig) newHost(ctx context.Context, progress io.Writer) (*host.Host, error) {
	consent, err := c.openConsent()
	if err != nil {
		return nil, err
	}
	h := host.New(&host.Options{Consent: consent, QueryTimeout: time.Duration(c.QueryTimeout)})
	fail := func(err error) (*host.Host, error) {
		_ = h.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	for _, p := range c.Providers {
		switch {
		case p.Files != "":
			ix, err := files.Build(ctx, p.Files, &files.IndexOptions{Progress: progress})
			if err != nil {
				return fail(fmt.Errorf("config: provider %s: %w", p.ID, err))
			}
			if err := h.AddInProcess(p.ID, files.New(ix)); err != nil {
				return fail(fmt.Errorf("config: provider %s: %w", p.ID, err))
			}
		case p.MCP != "":
			if err := addMCP(h, p); err != nil {
				return fail(fmt.Errorf("config: provider %s: %w", p.ID, err))
			}
		case len(p.Command) > 0:
			var so *host.StdioOptions
			if p.TokenEnv != "" {
				tok, ok := os.LookupEnv(p.TokenEnv)
				if !ok {
					return fail(fmt.Errorf("config: provider %s: environment variable %s is not set", p.ID, p.TokenEnv))
				}
				so = &host.StdioOptions{SecretEnv: map[string]host.Credential{p.TokenEnv: host.NewCredential(tok)}}
			}
			if err := h.AddStdio(p.ID, p.Command[0], p.Command[1:], so); err != nil {
				return fail(fmt.Errorf("config: provider %s: %w", p.ID, err))
			}
		default:
			var ho host.HTTPOptions
			if p.TokenEnv != "" {
				tok, ok := os.LookupEnv(p.TokenEnv)
				if !ok {
					return fail(fmt.Errorf("config: provider %s: environment variable %s is not set", p.ID, p.TokenEnv))
				}
				ho.Credential = host.NewCredential(tok)
			}
			if err := h.AddHTTP(p.ID, p.URL, &ho); err != nil {
				return fail(fmt.Errorf("config: provider %s: %w", p.ID, err))
			}
		}
	}
	return h, nil
}

func (c *serveConfig) openConsent() (*consent.Store, error) {
	if c.Consent != nil {
		return c.Consent, nil
	}
	path := c.ConsentStore
	if path == "" {
		p, err := consent.DefaultPath()
		if err != nil {
			return consent.NewStore(), nil
		}
		path = p
	}
	// Watched, not opened: the server re-reads the journal when it
	// changes, so a grant or a revocation made while it runs holds from
	// the next request on.
	st, err := consent.Watch(path)
	if err != nil {
		return nil, fmt.Errorf("config: consent store: %w", err)
	}
	return st, nil
}

// addMCP registers an MCP server bridged as a provider.
func addMCP(h *host.Host, p providerConfig) error {
	t, err := mcpbridge.ParseTarget(p.MCP)
	if err != nil {
		return err
	}
	var o mcpbridge.Options
	if p.TokenEnv != "" {
		if len(t.Command) > 0 {
			return fmt.Errorf("token_env: an MCP stdio server takes no bearer token (only mcp:https://... does)")
		}
		tok, ok := os.LookupEnv(p.TokenEnv)
		if !ok {
			return fmt.Errorf("environment variable %s is not set", p.TokenEnv)
		}
		o.Credential = host.NewCredential(tok)
	}
	if p.MCPTool != "" {
		if o.Tool, o.ToolArgument, err = mcpbridge.ParseTool(p.MCPTool); err != nil {
			return err
		}
	}
	_, err = mcpbridge.Register(h, p.ID, t, &o)
	return err
}
