package compose

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cputime"
)

// benchOffers builds n offers of 1 KiB content from 8 providers; 10% of them
// share a content digest with another offer (so dedup has work to do).
func benchOffers(n int) ([]Offer, int) {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	offers := make([]Offer, n)
	total := 0
	body := strings.Repeat("func retry(ctx context.Context) error { return backoff(ctx, 3) }\n", 16)
	for i := range offers {
		content := (fmt.Sprintf("// file %d\n", i) + body)[:1024] // distinct bytes per offer
		f := &frame.Frame{
			ID:            fmt.Sprintf("src/pkg/file%06d.go#L1-40", i),
			Kind:          frame.KindSnippet,
			Title:         fmt.Sprintf("file%06d.go", i),
			Content:       content,
			CitationLabel: fmt.Sprintf("file%06d.go:1-40", i),
			Score:         float32(rng.IntN(1000)) / 1000,
			TokenCost:     256,
			ContentDigest: fmt.Sprintf("sha256:%064x", i),
			Provenance:    []frame.Provenance{{Type: frame.ProvenanceFile, URI: fmt.Sprintf("file:///repo/src/pkg/file%06d.go", i), Range: "L1-40"}},
		}
		if i%10 == 0 && i > 0 {
			f.ContentDigest = fmt.Sprintf("sha256:%064x", i-1-rng.IntN(min(i, 50)))
		}
		p := fmt.Sprintf("provider-%d", i%8)
		offers[i] = Offer{Provider: p, Frame: f}
		total += RenderedCost(p, f)
	}
	return offers, total
}

// BenchmarkForPrompt: n offers of 1 KiB from 8 providers, 10% shared
// digests, budget half the total rendered cost.
func BenchmarkForPrompt(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		offers, total := benchOffers(n)
		b.Run(fmt.Sprintf("offers=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var res *Result
			cpu := cputime.Func(func() {
				for b.Loop() {
					res = ForPrompt(offers, total/2, nil)
				}
			})
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			if len(res.Audit.Entries) != n {
				b.Fatal("audit is not a partition")
			}
			b.ReportMetric(float64(testing.AllocsPerRun(1, func() { ForPrompt(offers, total/2, nil) }))/float64(n), "allocs/offer")
		})
	}
}

// BenchmarkRender: render throughput of one frame with 1 MiB of content,
// benign text against adversarial text.
func BenchmarkRender(b *testing.B) {
	cases := []struct{ name, unit string }{
		{"benign", "the retry loop backs off exponentially; "},
		{"lt-every-8-bytes", "<abcdefg"},
		{"fence-every-8-bytes", "</frame>"},
		{"lt-cjk", "<日"},
		{"lt-emoji", "<😀"},
		{"entities", "&lt;&amp;"},
	}
	for _, c := range cases {
		f := testFrame("big", strings.Repeat(c.unit, (1<<20)/len(c.unit)))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.Content)))
			b.ReportAllocs()
			cpu := cputime.Func(func() {
				for b.Loop() {
					_ = RenderFrame("provider", f)
				}
			})
			b.ReportMetric(float64(len(f.Content))*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
		})
	}
}
