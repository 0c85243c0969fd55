package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/tooltest"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8787", "ftp://x", "http://", "://x"} {
		if _, err := New(u, nil); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
	c, err := New("http://127.0.0.1:8787/base/", nil)
	if err != nil || c.base.Path != "/base" {
		t.Fatalf("New with a path: %v %v", c, err)
	}
}

func TestErrorsWithoutEnvelope(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/p/v1/x" {
			t.Errorf("path %q", r.URL.Path)
		}
		http.Error(w, strings.Repeat("bad gateway ", 40), http.StatusBadGateway)
	}))
	defer ts.Close()
	c, _ := New(ts.URL+"/p", nil)
	err := c.Do(context.Background(), "/v1/x", map[string]int{"a": 1}, nil)
	var e *api.Error
	if !errors.As(err, &e) || e.Status != 502 || e.Code != "http_502" || len(e.Message) > 210 {
		t.Fatalf("error %#v", err)
	}
}

func TestEnvelopeErrorsKeepStatusAndRule(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(422)
		_, _ = w.Write([]byte(`{"error":{"code":"rule_violation","message":"F3 citation_label: blank","rule":"F3","field":"offers[0].frame.citation_label"}}`))
	}))
	defer ts.Close()
	c, _ := New(ts.URL, nil)
	err := c.Do(context.Background(), "/v1/compose", struct{}{}, nil)
	var e *api.Error
	if !errors.As(err, &e) || e.Status != 422 || e.Rule != "F3" || e.Field != "offers[0].frame.citation_label" {
		t.Fatalf("error %#v", err)
	}
	if !strings.Contains(err.Error(), "rule F3") {
		t.Fatalf("Error() = %q", err)
	}
}

func TestHealth(t *testing.T) {
	h := server.New(nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, _ := New(ts.URL, nil)
	if err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.Drain()
	if err := c.Health(context.Background()); err == nil {
		t.Fatal("draining server reported healthy")
	}
}

// A Go client links the API's shapes, not the server: no handler, no
// listener, no server configuration.
func TestClientDoesNotLinkTheServer(t *testing.T) {
	for _, dep := range tooltest.Deps(t) {
		if dep == "github.com/ctxkit/ctxkit/server" {
			t.Fatal("server/client depends on github.com/ctxkit/ctxkit/server")
		}
	}
}
