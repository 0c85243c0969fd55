package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/mcpbridge"
)

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
	o := mcpbridge.Options{StartTimeout: time.Duration(p.MCPStartTimeout)}
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
