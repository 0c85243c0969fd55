package compose

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/cputime"
	"github.com/ctxkit/ctxkit/internal/fence/fencetest"
)

// BenchmarkFenceRender: RenderFrame of one frame of 1, 2, 4 and 8 MiB of each
// content shape of fencetest.Shapes; cpu-ns/B is the process CPU time per
// content byte.
func BenchmarkFenceRender(b *testing.B) {
	fencetest.BenchShapes(b, "frame", func(content string) func() error {
		f := testFrame("big", content)
		return func() error { _ = RenderFrame("provider", f); return nil }
	})
}

// BenchmarkNeutralizeBenign: the scanner alone over benign text (Neutralize
// scans once and, finding nothing, returns its input).
func BenchmarkNeutralizeBenign(b *testing.B) {
	s := strings.Repeat("the retry loop backs off exponentially; ", (1<<20)/40)
	b.SetBytes(int64(len(s)))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := cputime.Thread()
	for b.Loop() {
		if neutralize(s) != s {
			b.Fatal("benign text changed")
		}
	}
	if cpu := cputime.Thread() - t0; t0 > 0 && cpu > 0 {
		b.ReportMetric(float64(len(s))*float64(b.N)/cpu.Seconds()/1e9, "cpu-GB/s")
	}
}

// BenchmarkContext10k: Context over the 10k-offer set of BenchmarkForPrompt
// (1 KiB contents, 8 providers); cpu-ns/op is the mean thread CPU time of
// one call on its thread, best-cpu-ns/op the least, proc-cpu-ns/op the CPU
// time of the whole process per call (the garbage collector's threads
// included).
func BenchmarkContext10k(b *testing.B) {
	offers, _ := benchOffers(10_000)
	var out string
	b.ReportAllocs()
	var total, best time.Duration = 0, 1<<63 - 1
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p0 := cputime.Process()
	for b.Loop() {
		t0, w0 := cputime.Thread(), time.Now()
		out = Context(offers)
		d := cputime.Thread() - t0
		if t0 == 0 {
			d = time.Since(w0)
		}
		total += d
		best = min(best, d)
	}
	if p := cputime.Process() - p0; p0 > 0 {
		// Every thread's CPU: the collector's included.
		b.ReportMetric(float64(p.Nanoseconds())/float64(b.N), "proc-cpu-ns/op")
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(best.Nanoseconds()), "best-cpu-ns/op")
	b.ReportMetric(float64(len(out)), "out-bytes")
}
