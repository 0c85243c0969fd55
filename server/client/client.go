// Package client calls a ctxkit HTTP service (`ctxkit serve`, or any server
// mounting server.Handler). Errors the service answers come back as
// *api.Error, so a caller can branch on the code, the status or the
// protocol rule.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/window"
)

// maxResponseBytes bounds what the client reads from one response.
const maxResponseBytes = 256 << 20

// Client calls one ctxkit service. Safe for concurrent use.
type Client struct {
	base *url.URL
	hc   *http.Client
}

// New returns a client for the service at baseURL (for example
// "http://127.0.0.1:8787") that sends its requests with hc; nil means
// http.DefaultClient.
func New(baseURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: base url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base url %q: want http://HOST[:PORT] or https://HOST[:PORT]", baseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: u, hc: hc}, nil
}

// Do POSTs in as JSON to path and decodes a 2xx answer into out (which may
// be nil). Any other answer is returned as *api.Error. It is for bodies
// the typed methods do not cover, such as JSON passed through unchanged.
func (c *Client) Do(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("client: %s: encode request: %w", path, err)
	}
	return c.roundTrip(ctx, http.MethodPost, path, body, out)
}

// Health reports nil when GET /healthz answers 200.
func (c *Client) Health(ctx context.Context) error {
	return c.roundTrip(ctx, http.MethodGet, api.PathHealth, nil, nil)
}

func (c *Client) send(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	u := *c.base
	u.Path += path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", path, err)
	}
	return resp, nil
}

func (c *Client) roundTrip(ctx context.Context, method, path string, body []byte, out any) error {
	resp, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("client: %s: read response: %w", path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("client: %s: decode response: %w", path, err)
	}
	return nil
}

// decodeError reads the service's error envelope; an answer without one
// (a proxy's page, say) still becomes a *api.Error with its status.
func decodeError(status int, b []byte) error {
	var env struct {
		Error *api.Error `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err == nil && env.Error != nil && env.Error.Code != "" {
		env.Error.Status = status
		return env.Error
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return &api.Error{Status: status, Code: "http_" + fmt.Sprint(status), Message: msg}
}

// post sends req to path and decodes the 2xx answer as an Out.
func post[Out any](ctx context.Context, c *Client, path string, req any) (*Out, error) {
	var out Out
	if err := c.Do(ctx, path, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Prompt calls POST /v1/prompt.
func (c *Client) Prompt(ctx context.Context, req *api.PromptRequest) (*api.PromptResponse, error) {
	return post[api.PromptResponse](ctx, c, api.PathPrompt, req)
}

// Compose calls POST /v1/compose.
func (c *Client) Compose(ctx context.Context, req *api.ComposeRequest) (*api.ComposeResponse, error) {
	return post[api.ComposeResponse](ctx, c, api.PathCompose, req)
}

// Context calls POST /v1/context.
func (c *Client) Context(ctx context.Context, req *api.ContextRequest) (*api.ContextResponse, error) {
	return post[api.ContextResponse](ctx, c, api.PathContext, req)
}

// Query calls POST /v1/query.
func (c *Client) Query(ctx context.Context, req *api.QueryRequest) (*api.QueryResponse, error) {
	return post[api.QueryResponse](ctx, c, api.PathQuery, req)
}

// Assess calls POST /v1/assess.
func (c *Client) Assess(ctx context.Context, req *api.AssessRequest) (*window.Assessment, error) {
	return post[window.Assessment](ctx, c, api.PathAssess, req)
}
