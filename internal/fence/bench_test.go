package fence

import (
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/cputime"
	"github.com/ctxkit/ctxkit/internal/fence/fencetest"
)

// BenchmarkScanShapes: the scanner alone (Count) over 1 MiB of each content
// shape of fencetest.Shapes, for profiling (cpu-ns/B: process CPU time per
// byte); the render benchmarks of compose and prompt are where the ratios
// are measured.
func BenchmarkScanShapes(b *testing.B) {
	for _, c := range fencetest.Shapes("frame") {
		s := strings.Repeat(c.Unit, (1<<20)/len(c.Unit))
		b.Run(c.Name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			cpu := cputime.Func(func() {
				for b.Loop() {
					frameScanner.count(s)
				}
			})
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(s)), "cpu-ns/B")
		})
	}
}
