package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

// docsHost builds a host with a files provider over a small tree and,
// when crash is set, a stdio provider that dies at once; it closes with
// the test.
func docsHost(t *testing.T, crash bool) *host.Host {
	t.Helper()
	docs := t.TempDir()
	for name, text := range map[string]string{
		"budget.md": "# Budget\n\nThe global budget is split between providers equally;\nthe first providers get one token more.\n",
		"fences.md": "# Fences\n\nEvery frame renders inside one fence that content cannot close.\n",
		"other.md":  "# Unrelated\n\nNothing about the topic here.\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	ix, err := files.Build(ctx, docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := host.New(&host.Options{QueryTimeout: 5 * time.Second})
	t.Cleanup(func() { _ = h.Close(ctx) })
	if err := h.AddInProcess("docs", files.New(ix)); err != nil {
		t.Fatal(err)
	}
	if crash {
		if err := h.AddStdio("crashy", "bash", []string{"-c", "exit 3"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestQueryRoute(t *testing.T) {
	h := docsHost(t, true)
	ctx := context.Background()
	c, sh := newTestClient(t, &server.Options{Query: h})
	res, err := c.Query(ctx, &api.QueryRequest{Goal: "how is the budget split between providers", Budget: 600})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FanOut.Outcomes) != 2 || res.FanOut.Outcomes[0].Provider != "docs" || res.FanOut.Outcomes[0].Status != host.StatusFrames {
		t.Fatalf("outcomes %+v", res.FanOut.Outcomes)
	}
	if o := res.FanOut.Outcomes[1]; o.Provider != "crashy" || o.Status == host.StatusFrames || o.Error() == "" {
		t.Fatalf("the crashing provider's leg: %+v", o)
	}
	if !strings.Contains(res.Composition.Prompt, "split between providers equally") {
		t.Fatalf("prompt lacks the budget doc:\n%s", res.Composition.Prompt)
	}
	if res.Composition.Audit.TokensUsed > 600 || len(res.Composition.Audit.Entries) == 0 {
		t.Fatalf("audit %+v", res.Composition.Audit)
	}
	m := metricsOf(sh)
	if !strings.Contains(m, `ctxkit_provider_outcomes_total{kind="frames"} 1`) ||
		!strings.Contains(m, `ctxkit_provider_outcomes_total{kind="`+res.FanOut.Outcomes[1].Status.String()+`"} 1`) {
		t.Fatalf("provider outcome metrics:\n%s", m)
	}

	for _, tc := range []struct {
		req               api.QueryRequest
		status            int
		code, field, rule string
	}{
		{api.QueryRequest{Goal: " "}, 400, api.CodeBadRequest, "goal", ""},
		{api.QueryRequest{Goal: "g", Budget: -5}, 400, api.CodeBadRequest, "budget", ""},
		{api.QueryRequest{Goal: "g", MaxFrames: 1 << 20}, 400, api.CodeBadRequest, "max_frames", ""},
		{api.QueryRequest{Goal: "g", Strategy: "x"}, 400, api.CodeBadRequest, "strategy", ""},
		{api.QueryRequest{Goal: "g", Kinds: []frame.Kind{" "}}, 422, api.CodeRuleViolation, "kinds[0]", "schema"},
		{api.QueryRequest{Goal: "g", AsOf: "yesterday"}, 422, api.CodeRuleViolation, "as_of", "F4"},
	} {
		_, err := c.Query(ctx, &tc.req)
		e := wantErrorLoose(t, err, tc.status, tc.code, tc.rule)
		if e.Field != tc.field {
			t.Errorf("%+v: field %q, want %q", tc.req, e.Field, tc.field)
		}
	}
}

func TestQueryRouteUnconfigured(t *testing.T) {
	c, _ := newTestClient(t, nil)
	_, err := c.Query(context.Background(), &api.QueryRequest{Goal: "g"})
	wantError(t, err, 503, api.CodeUnavailable, "", "")
}
