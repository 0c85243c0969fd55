package host

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
)

// benchHost registers nIn in-process and nStdio stdio providers, each
// answering 50 frames, and handshakes them.
func benchHost(b *testing.B, nIn, nStdio int, delay time.Duration) *Host {
	h := New(&Options{ShutdownGrace: 200 * time.Millisecond})
	for i := range nIn {
		h.AddInProcess(fmt.Sprintf("in-%d", i), &honest{frames: benchFrames(fmt.Sprintf("in%d", i)), delay: delay})
	}
	exe := mustExe(b)
	for i := range nStdio {
		if err := h.AddStdio(fmt.Sprintf("stdio-%d", i), exe, nil, &StdioOptions{Env: []string{"CTXKIT_FAKE=bench", "CTXKIT_CORR=1"}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range h.IDs() {
		if _, err := h.Connect(context.Background(), id); err != nil {
			b.Fatal(err)
		}
	}
	return h
}

// BenchmarkFanOut measures QueryAll over 8 in-process and 8 stdio providers
// answering 50 frames each, and reports the fan-out's overhead beyond its
// slowest leg (p50 and p99 over the iterations).
func BenchmarkFanOut(b *testing.B) {
	for _, delay := range []time.Duration{0, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("8in+8stdio/delay=%v", delay), func(b *testing.B) {
			h := benchHost(b, 8, 8, delay)
			defer h.Close(context.Background())
			q := &frame.Query{Goal: "bench", MaxFrames: 50, MaxTokens: 100000}
			var over, slow []time.Duration
			b.ResetTimer()
			for b.Loop() {
				fo := h.QueryAll(context.Background(), q)
				if n := len(fo.Accepted()); n != 16*50 {
					b.Fatalf("accepted %d frames", n)
				}
				var max time.Duration
				for _, o := range fo.Outcomes {
					max = maxDur(max, o.Elapsed)
				}
				over = append(over, fo.Elapsed-max)
				slow = append(slow, max)
			}
			b.ReportMetric(float64(pct(over, 50).Microseconds()), "overhead-p50-µs")
			b.ReportMetric(float64(pct(over, 99).Microseconds()), "overhead-p99-µs")
			b.ReportMetric(float64(pct(slow, 50).Microseconds()), "slowest-leg-p50-µs")
		})
	}
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}
