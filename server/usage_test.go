package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/internal/httpcall"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/server/client"
)

func getUsage(t *testing.T, url string) (int, host.UsageReport) {
	t.Helper()
	resp, b := httpcall.Do(t, http.MethodGet, url, nil)
	var r host.UsageReport
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	return resp.StatusCode, r
}

// Every frame /v1/query served is in GET /v1/usage, billed at its
// token_cost, and the report passes the UR1 check; since filters by time
// and a malformed since is a 400 naming the parameter.
func TestUsageCountsServedFrames(t *testing.T) {
	h := docsHost(t, false)
	ctx := context.Background()
	ts := httptest.NewServer(server.New(&server.Options{Query: h}))
	defer ts.Close()
	c, err := client.New(ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want uint64
	var frames int
	for i := 0; i < 3; i++ {
		qr, err := c.Query(ctx, &api.QueryRequest{Goal: "how is the budget split between providers", Budget: 600})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range qr.FanOut.Outcomes {
			for _, f := range o.Frames {
				want += uint64(f.TokenCost)
				frames++
			}
		}
	}
	if frames == 0 {
		t.Fatal("the query served no frame: nothing to count")
	}
	status, rep := getUsage(t, ts.URL+api.PathUsage)
	if status != http.StatusOK || rep.BudgetConsumed != want || len(rep.Providers) != 1 || int(rep.Providers[0].FramesServed) != frames {
		t.Fatalf("usage %d %+v, want %d frames costing %d", status, rep, frames, want)
	}
	if err := rep.Check(); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if status, rep := getUsage(t, ts.URL+api.PathUsage+"?since="+later); status != http.StatusOK || rep.BudgetConsumed != 0 {
		t.Fatalf("since the future: %d %+v", status, rep)
	}
	if status, _ := getUsage(t, ts.URL+api.PathUsage+"?since=yesterday"); status != http.StatusBadRequest {
		t.Fatalf("since=yesterday: %d, want 400", status)
	}
}

func ExampleUsageReportOf() {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := server.UsageReportOf([]server.UsageEvent{
		{Frame: frame.ID{Provider: "docs", Frame: "a"}, TokenCost: 40, RequestID: "r1", ServedAt: at},
		{Frame: frame.ID{Provider: "wiki", Frame: "w"}, TokenCost: 25, RequestID: "r1", ServedAt: at},
		{Frame: frame.ID{Provider: "docs", Frame: "b"}, TokenCost: 10, RequestID: "r2", ServedAt: at},
	}, at)
	fmt.Println(r.BudgetConsumed, r.Check() == nil)
	for _, p := range r.Providers {
		fmt.Println(p.ProviderID, p.FramesServed, p.TokenCost)
	}
	// Output:
	// 75 true
	// docs 2 50
	// wiki 1 25
}
