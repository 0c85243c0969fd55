package tokens

import (
	"sort"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/cputime"
)

// corpusText is every corpus class concatenated in name order.
func corpusText(b *testing.B) string {
	texts := corpus(b)
	names := make([]string, 0, len(texts))
	for n := range texts {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, n := range names {
		sb.WriteString(texts[n])
	}
	return sb.String()
}

// BenchmarkCount measures counting throughput (MB/s) on the whole corpus.
// exact counters are measured without their cache (the "cached" case shows
// a repeat of the same text).
func BenchmarkCount(b *testing.B) {
	text := corpusText(b)
	o, c := o200kBase(), cl100kBase()
	o.count("load the ranks")
	c.count("before timing")
	for _, bc := range []struct {
		name  string
		count func(string) int
	}{
		{"canonical", canonical{}.Count},
		{"conservative", conservative{}.Count},
		{"safe", Safe{}.Count},
		{"o200k_base", o.count},
		{"cl100k_base", c.count},
		{"o200k_base/cached", o.Count},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			start := cputime.Process()
			for b.Loop() {
				bc.count(text)
			}
			if cpu := cputime.Process() - start; cpu > 0 {
				b.ReportMetric(float64(len(text))*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
			}
		})
	}
}
