package fencetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/cputime"
)

// BenchShapes runs one sub-benchmark SHAPE/NMiB for each content shape of
// Shapes(name) at 1, 2, 4 and 8 MiB, the figures the adversarial/benign
// ratios are taken from: setup builds what renders content (outside the
// timing) and returns the render, which each iteration calls once; an
// error ends the benchmark.
// cpu-ns/B is the process CPU time per content byte.
func BenchShapes(b *testing.B, name string, setup func(content string) (render func() error)) {
	for _, mib := range []int{1, 2, 4, 8} {
		for _, c := range Shapes(name) {
			content := strings.Repeat(c.Unit, (mib<<20)/len(c.Unit))
			b.Run(fmt.Sprintf("%s/%dMiB", c.Name, mib), func(b *testing.B) {
				render := setup(content)
				b.SetBytes(int64(len(content)))
				b.ReportAllocs()
				cpu := cputime.Func(func() {
					for b.Loop() {
						if err := render(); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(len(content)), "cpu-ns/B")
			})
		}
	}
}
