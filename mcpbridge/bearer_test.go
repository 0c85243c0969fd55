package mcpbridge_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/mcpbridge"
)

const goodToken = "tok-3f9c2a71e8"

// authServer serves docs over Streamable HTTP on loopback to requests
// bearing goodToken. Any other request gets 401 with a body that echoes
// its Authorization header; a resource whose read fails echoes it in the
// error, and echo (when set) is a resource whose text carries it.
func authServer(t *testing.T, echo bool) (url string, seen *atomic.Int32) {
	t.Helper()
	seen = new(atomic.Int32)
	s := docServer(docs(), nil)
	s.AddResource(&mcp.Resource{URI: "notes://broken", Name: "broken.md", MIMEType: "text/markdown"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, fmt.Errorf("cannot read for %s", req.Extra.Header.Get("Authorization"))
		})
	if echo {
		s.AddResource(&mcp.Resource{URI: "notes://echo", Name: "echo.md", MIMEType: "text/markdown"},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				text := "# Retries\n\nretried three times; your header was " + req.Extra.Header.Get("Authorization") + "\n"
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "notes://echo", Text: text}}}, nil
			})
	}
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if got := r.Header.Get("Authorization"); got != "Bearer "+goodToken {
			http.Error(w, "unauthorized: you sent "+got, http.StatusUnauthorized)
			return
		}
		mh.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL, seen
}

// bearerLeg queries the bridge to url holding token through a host and
// returns the leg and what the bridge reported.
func bearerLeg(t *testing.T, url, token string) (host.Outcome, mcpbridge.Report) {
	t.Helper()
	h := host.New(nil)
	defer h.Close(context.Background())
	target, err := mcpbridge.ParseTarget("mcp:" + url)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mcpbridge.Register(h, "kb", target, &mcpbridge.Options{Credential: host.NewCredential(token)})
	if err != nil {
		t.Fatal(err)
	}
	fo := h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "how often is a failed request retried", MaxFrames: 8, MaxTokens: 1000}, 1000)
	return fo.Outcomes[0], p.Report()
}

// The bearer reaches the server on every request, and a server that echoes
// it (in a read error, in a 401 body) cannot make ctxkit print it (C8).
func TestBearerCredential(t *testing.T) {
	url, _ := authServer(t, false)
	o, rep := bearerLeg(t, url, goodToken)
	if o.Status != host.StatusFrames || len(o.Frames) == 0 || o.Frames[0].URI != "notes://retry" {
		t.Fatalf("leg %v %q, frames %d: want the retry resource first", o.Status, o.Error(), len(o.Frames))
	}
	var broken *mcpbridge.LeftOut
	for i, l := range rep.Left {
		if l.URI == "notes://broken" {
			broken = &rep.Left[i]
		}
	}
	if broken == nil || broken.Reason != "read_failed" {
		t.Fatalf("report %+v: want notes://broken left out as read_failed", rep.Left)
	}
	if strings.Contains(broken.Detail, goodToken) || !strings.Contains(broken.Detail, "Credential(<redacted>)") {
		t.Errorf("read error detail %q: want the token redacted", broken.Detail)
	}

	const wrong = "tok-wrong-5d1e0b"
	o, _ = bearerLeg(t, url, wrong)
	if o.Status == host.StatusFrames || !strings.Contains(o.Error(), "Unauthorized") {
		t.Fatalf("wrong token: leg %v %q, want a failed leg naming the 401", o.Status, o.Error())
	}
	if strings.Contains(o.Error(), wrong) {
		t.Errorf("wrong token: the leg's error prints the credential: %q", o.Error())
	}
}

// A server that puts the credential into the evidence gets the whole reply
// discarded, as a CGP provider's would be.
func TestBearerEchoedInFramesIsDiscarded(t *testing.T) {
	url, _ := authServer(t, true)
	o, _ := bearerLeg(t, url, goodToken)
	if o.Status == host.StatusFrames || !strings.Contains(o.Error(), "reply echoes the provider's credential") || len(o.Frames) != 0 {
		t.Fatalf("leg %v %q with %d frames, want the reply discarded as echoing the credential", o.Status, o.Error(), len(o.Frames))
	}
	if strings.Contains(o.Error(), goodToken) {
		t.Errorf("error prints the credential: %q", o.Error())
	}
}

// Consent comes before any byte: a remote server holding a credential is
// not contacted until consent is granted, and a redirect is not followed
// (it would carry the bearer where consent never looked).
func TestBearerRemoteConsentAndNoRedirect(t *testing.T) {
	var requests, elsewhere atomic.Int32
	var auth atomic.Value
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		requests.Add(1)
		if r.URL.Host != "mcp.example.com" {
			elsewhere.Add(1)
		}
		auth.Store(r.Header.Get("Authorization"))
		h := http.Header{"Location": {"https://elsewhere.example/mcp"}}
		return &http.Response{StatusCode: http.StatusTemporaryRedirect, Header: h, Body: http.NoBody, Request: r}, nil
	})}
	h := host.New(nil)
	defer h.Close(context.Background())
	target, err := mcpbridge.ParseTarget("mcp:https://mcp.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	o := &mcpbridge.Options{HTTPClient: hc, Credential: host.NewCredential(goodToken)}
	if _, err := mcpbridge.Register(h, "remote", target, o); err != nil {
		t.Fatal(err)
	}
	q := &frame.Query{Goal: "x", MaxFrames: 4, MaxTokens: 100}
	if s := h.QueryAllBudgeted(context.Background(), q, 100).Outcomes[0].Status; s != host.StatusConsentRequired || requests.Load() != 0 {
		t.Fatalf("status %v after %d requests, want consent_required before any", s, requests.Load())
	}
	if err := h.Consent().Record(consent.Record{ProviderID: "remote", GrantedScope: "egress"}); err != nil {
		t.Fatal(err)
	}
	leg := h.QueryAllBudgeted(context.Background(), q, 100).Outcomes[0]
	if leg.Status == host.StatusFrames || requests.Load() == 0 || elsewhere.Load() != 0 {
		t.Fatalf("leg %v after %d requests, %d to the redirect's host: want the redirect not followed",
			leg.Status, requests.Load(), elsewhere.Load())
	}
	if got := auth.Load(); got != "Bearer "+goodToken {
		t.Errorf("Authorization %q, want the bearer", got)
	}
	if strings.Contains(fmt.Sprint(o), goodToken) || strings.Contains(fmt.Sprintf("%#v", o), goodToken) {
		t.Errorf("the options print the credential")
	}
}

func TestBearerRefusedForStdio(t *testing.T) {
	_, err := mcpbridge.New("kb", mcpbridge.Target{Command: []string{"true"}}, &mcpbridge.Options{Credential: host.NewCredential(goodToken)})
	if !errors.Is(err, mcpbridge.ErrBadTarget) {
		t.Fatalf("err %v, want ErrBadTarget", err)
	}
}

// A tool error that echoes the credential, in any spelling a quote gives
// it, or across the point where the error text is cut, prints none of it.
func TestBearerEchoedInToolErrorIsScrubbed(t *testing.T) {
	for _, c := range []struct{ name, token, pad string }{
		{"quote", `qu0"SXYZ-tool-9876543210`, ""},
		{"backslash", `bk\SXYZ-tool-9876543210`, ""},
		{"tab", "tb\tSXYZ-tool-9876543210", ""},
		{"straddles the cut", "plainSXYZ-tool-9876543210", strings.Repeat("P", 1010)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "echoer", Version: "1"}, nil)
			type in struct {
				Query string `json:"query"`
			}
			mcp.AddTool(s, &mcp.Tool{Name: "search"}, func(_ context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
				text := c.pad + strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ") + " was refused"
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
			})
			h := host.New(nil)
			defer h.Close(context.Background())
			target, err := mcpbridge.ParseTarget("mcp:" + serveHTTP(t, s))
			if err != nil {
				t.Fatal(err)
			}
			o := &mcpbridge.Options{Credential: host.NewCredential(c.token), Tool: "search"}
			if _, err := mcpbridge.Register(h, "kb", target, o); err != nil {
				t.Fatal(err)
			}
			leg := h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "g", MaxFrames: 4, MaxTokens: 100}, 100).Outcomes[0]
			msg := leg.Error()
			if !strings.Contains(msg, "the tool answered an error") {
				t.Fatalf("leg %v: %q, want the tool's error", leg.Status, msg)
			}
			q := strconv.Quote(c.token)
			for _, part := range []string{c.token, q[1 : len(q)-1], c.token[:12], "tool-9876543210"} {
				if strings.Contains(msg, part) {
					t.Errorf("the error prints %q of the credential: %q", part, msg)
				}
			}
		})
	}
}
