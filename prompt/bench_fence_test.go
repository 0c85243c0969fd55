package prompt

import (
	"io"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkRenderSizes: WriteTo of a prompt whose untrusted part is 1, 4 or
// 8 MiB of benign or adversarial content; cpu-ns/B is the process CPU time
// per content byte, the figure the adversarial/benign ratio is taken from.
func BenchmarkRenderSizes(b *testing.B) {
	for _, mib := range []int{1, 4, 8} {
		for _, unit := range []string{"plain text, no tags. ", "<untrusted", "<日", "<", "<u", "</\u200b", "\uFF1C\uFF55", "<\U0001CCE4"} {
			content := External(strings.Repeat(unit, mib<<20/len(unit)))
			b.Run(strconv.Quote(unit)+"/"+strconv.Itoa(mib)+"MiB", func(b *testing.B) {
				p := New().Text("Summarise:").Untrusted(content)
				b.SetBytes(int64(len(content)))
				cpu0, ok := processCPU()
				for b.Loop() {
					if _, err := p.WriteTo(io.Discard); err != nil {
						b.Fatal(err)
					}
				}
				if cpu1, ok1 := processCPU(); ok && ok1 {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/float64(len(content)), "cpu-ns/B")
				}
			})
		}
	}
}
