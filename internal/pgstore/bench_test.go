package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cputime"
	"github.com/ctxkit/ctxkit/internal/pgtest"
	"github.com/ctxkit/ctxkit/server"
)

// The per-request costs the shared store adds: a consent decision while
// the listener is up (answered from the cache) and recording one request's
// served frames (an append to the pending batch).
//
//	go test -run='^$' -bench=. -benchtime=20000x ./internal/pgstore/
func BenchmarkPerRequest(b *testing.B) {
	pg := pgtest.Start(b)
	ctx := context.Background()
	st := openStore(b, pg.URL())
	b.Run("consent-decision-cached", func(b *testing.B) {
		cs, log := replica(b, pg.URL())
		defer log.Close()
		if err := cs.Grant(receipt()); err != nil {
			b.Fatal(err)
		}
		for !log.Listening() {
			time.Sleep(5 * time.Millisecond)
		}
		cs.Evaluate(subject(), scoped)
		b.ResetTimer()
		cpu := cputime.Process()
		for i := 0; i < b.N; i++ {
			if !cs.Evaluate(subject(), scoped).Permitted {
				b.Fatal("not permitted")
			}
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})
	b.Run("usage-record-4-frames", func(b *testing.B) {
		u := st.Usage()
		defer u.Close(ctx)
		ev := make([]server.UsageEvent, 4)
		for i := range ev {
			ev[i] = server.UsageEvent{Frame: frame.ID{Provider: "wiki", Frame: "f"}, TokenCost: 4, RequestID: "r", ServedAt: time.Now()}
		}
		b.ResetTimer()
		cpu := cputime.Process()
		for i := 0; i < b.N; i++ {
			u.Record(ev)
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
	})
}
