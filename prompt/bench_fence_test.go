package prompt

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/cputime"
	"github.com/ctxkit/ctxkit/internal/fence/fencetest"
)

// BenchmarkRenderSizes: WriteTo of a prompt whose untrusted part is 1, 2, 4 or
// 8 MiB of each content shape of fencetest.Shapes; cpu-ns/B is the process CPU time
// per content byte, the figure the adversarial/benign ratio is taken from.
func BenchmarkRenderSizes(b *testing.B) {
	for _, mib := range []int{1, 2, 4, 8} {
		for _, c := range fencetest.Shapes(tagName) {
			content := External(strings.Repeat(c.Unit, mib<<20/len(c.Unit)))
			b.Run(c.Name+"/"+strconv.Itoa(mib)+"MiB", func(b *testing.B) {
				p := New().Text("Summarise:").Untrusted(content)
				b.SetBytes(int64(len(content)))
				cpu0 := cputime.Process()
				for b.Loop() {
					if _, err := p.WriteTo(io.Discard); err != nil {
						b.Fatal(err)
					}
				}
				if cpu1 := cputime.Process(); cpu0 > 0 {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/float64(len(content)), "cpu-ns/B")
				}
			})
		}
	}
}
