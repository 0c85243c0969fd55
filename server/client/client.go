// Package client calls a ctxkit HTTP service (`ctxkit serve`, or any server
// mounting server.Handler). Errors the service answers come back as
// *api.Error, so a caller can branch on the code, the status or the
// protocol rule.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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

// Options configures a Client. Nil or zero fields mean the defaults.
type Options struct {
	// HTTPClient sends the requests. Default http.DefaultClient.
	HTTPClient *http.Client
}

// Client calls one ctxkit service. Safe for concurrent use.
type Client struct {
	base *url.URL
	hc   *http.Client
}

// New returns a client for the service at baseURL (for example
// "http://127.0.0.1:8787").
func New(baseURL string, opts *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("client: base url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("client: base url %q: want http://HOST[:PORT] or https://HOST[:PORT]", baseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	c := &Client{base: u, hc: http.DefaultClient}
	if opts != nil && opts.HTTPClient != nil {
		c.hc = opts.HTTPClient
	}
	return c, nil
}

// Do POSTs in as JSON to path and decodes a 2xx answer into out (which may
// be nil). Any other answer is returned as *api.Error.
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

// Metrics returns the Prometheus text of GET /metrics.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	resp, err := c.send(ctx, http.MethodGet, api.PathMetrics, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return "", fmt.Errorf("client: %s: read response: %w", api.PathMetrics, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", decodeError(resp.StatusCode, b)
	}
	return string(b), nil
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

// IsCode reports whether err is a *api.Error with the given code.
func IsCode(err error, code string) bool {
	var e *api.Error
	return errors.As(err, &e) && e.Code == code
}

// Prompt calls POST /v1/prompt.
func (c *Client) Prompt(ctx context.Context, req *api.PromptRequest) (*api.PromptResponse, error) {
	var out api.PromptResponse
	if err := c.Do(ctx, api.PathPrompt, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Compose calls POST /v1/compose.
func (c *Client) Compose(ctx context.Context, req *api.ComposeRequest) (*api.ComposeResponse, error) {
	var out api.ComposeResponse
	if err := c.Do(ctx, api.PathCompose, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Context calls POST /v1/context.
func (c *Client) Context(ctx context.Context, req *api.ContextRequest) (*api.ContextResponse, error) {
	var out api.ContextResponse
	if err := c.Do(ctx, api.PathContext, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Query calls POST /v1/query.
func (c *Client) Query(ctx context.Context, req *api.QueryRequest) (*api.QueryResponse, error) {
	var out api.QueryResponse
	if err := c.Do(ctx, api.PathQuery, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Assess calls POST /v1/assess.
func (c *Client) Assess(ctx context.Context, req *api.AssessRequest) (*window.Assessment, error) {
	var out window.Assessment
	if err := c.Do(ctx, api.PathAssess, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
