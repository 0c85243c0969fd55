package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/server/api"
)

// BenchmarkStoreLoad runs /v1/compose and /v1/query load against one
// replica on the local journal and one on PostgreSQL, in the same run, and
// reports each one's throughput and p99. /v1/query fans out to a loopback
// provider that needs a consent receipt, so every request evaluates
// consent against the store and records its served frame.
//
//	go test -run='^$' -bench=StoreLoad -benchtime=1x ./cmd/ctxkit/
func BenchmarkStoreLoad(b *testing.B) {
	pg := migratedStore(b)
	p := newScopedProvider(b)
	journal := filepath.Join(b.TempDir(), "consent.ndjson")
	grant := func(store string) {
		if code, _, errs := runCLI(b, "", p.grantArgs(store)...); code != exitOK {
			b.Fatalf("grant: %s", errs)
		}
	}
	grant(journal)
	grant(pg.URL())
	stores := []struct{ name, cfg string }{
		{"local", p.config(b, "consent_store", journal)},
		{"postgres", p.config(b, "store", pg.URL())},
	}
	urls := map[string]string{}
	for _, s := range stores {
		urls[s.name], _ = startServe(b, s.cfg)
	}
	bodies := map[string][]byte{
		api.PathCompose: loadgen.ComposeBody(16, 256),
		api.PathQuery:   []byte(`{"goal":"g","budget":400}`),
	}
	for _, route := range []string{api.PathCompose, api.PathQuery} {
		for round := 0; round < 3; round++ { // alternate, so drift on the shared box hits both
			for _, s := range stores {
				b.Run(route[4:]+"/"+s.name, func(b *testing.B) {
					rep, err := loadgen.Run(context.Background(), loadgen.Options{URL: urls[s.name] + route, Body: bodies[route],
						Conns: 4, Duration: 3 * time.Second, Raw: true})
					if err != nil {
						b.Fatal(err)
					}
					if rep.OK != rep.Requests || rep.Requests == 0 {
						b.Fatalf("%s: %v", s.name, rep)
					}
					b.ReportMetric(rep.RPS(), "req/s")
					b.ReportMetric(float64(rep.P99.Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(rep.P50.Microseconds())/1000, "p50-ms")
				})
			}
		}
	}
}
