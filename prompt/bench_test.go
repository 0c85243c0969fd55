package prompt

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/cputime"
)

// BenchmarkRenderAdversarial renders a prompt whose untrusted part is 1 MiB
// or 4 MiB of adversarial content; linear cost shows as the same MB/s (and
// the same cpu-ns/B, the process CPU time per content byte, which a busy
// shared machine disturbs less than wall time) at both sizes. Run:
//
//	go test -run='^$' -bench=RenderAdversarial -benchtime=20x ./prompt/
func BenchmarkRenderAdversarial(b *testing.B) {
	for _, unit := range []string{"<untrusted", "<日", "<", "plain text, no tags. "} {
		for _, mib := range []int{1, 4} {
			content := External(strings.Repeat(unit, mib<<20/len(unit)))
			b.Run(strconv.Quote(unit)+"/"+strconv.Itoa(mib)+"MiB", func(b *testing.B) {
				p := New().Text("Summarise:").Untrusted(content)
				b.SetBytes(int64(len(content)))
				b.ReportAllocs()
				cpu0 := cputime.Process()
				for b.Loop() {
					if _, err := p.WriteTo(io.Discard); err != nil {
						b.Fatal(err)
					}
				}
				if cpu1 := cputime.Process(); cpu0 > 0 {
					perOp := float64(cpu1-cpu0) / float64(b.N)
					b.ReportMetric(perOp, "cpu-ns/op")
					b.ReportMetric(perOp/float64(len(content)), "cpu-ns/B")
				}
			})
		}
	}
}

// BenchmarkBuild measures Build (a string) on a typical prompt.
func BenchmarkBuild(b *testing.B) {
	body := External(strings.Repeat("The login page fails with a 500 after the upgrade. ", 80))
	summary := NewAgentText(strings.Repeat("I reproduced it; the session store is misconfigured. ", 20))
	p := New().Text("Triage this issue:").Untrusted(body).Text("Previous agent's summary:").Untrusted(summary)
	b.SetBytes(int64(len(body) + summary.len()))
	for b.Loop() {
		if _, err := p.Build(); err != nil {
			b.Fatal(err)
		}
	}
}
