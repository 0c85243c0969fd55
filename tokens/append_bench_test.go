package tokens

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// appendTexts returns n distinct texts of size bytes shaped like the
// messages window's append benchmark adds: prose drawn word by word from
// the corpus, or JSON-like tool output.
func appendTexts(b *testing.B, n, size int, json bool) []string {
	prose, err := os.ReadFile("testdata/corpus/prose.txt")
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Fields(string(prose))
	r := rand.New(rand.NewPCG(8, 60))
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		fmt.Fprintf(&sb, "[%d]", i)
		for sb.Len() < size {
			w := words[r.IntN(len(words))]
			if json {
				fmt.Fprintf(&sb, `{"id":%d,"name":%q,"ok":true},`, r.IntN(100000), w)
			} else {
				sb.WriteString(" " + w)
			}
		}
		out[i] = sb.String()[:size]
	}
	return out
}

// BenchmarkCountMessage counts one new message per call (no cache hit):
// the counting share of window's BenchmarkSessionAppendExact.
func BenchmarkCountMessage(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int
		json bool
	}{{"prose-860B", 860, false}, {"json-4KB", 4096, true}} {
		texts := appendTexts(b, 3000, bc.size, bc.json)
		for _, e := range []*Exact{O200kBase(), Cl100kBase()} {
			e.count("load the ranks")
			b.Run(bc.name+"/"+e.Name(), func(b *testing.B) {
				b.SetBytes(int64(bc.size))
				i, start := 0, cpuTime()
				for b.Loop() {
					e.Count(texts[i%len(texts)])
					i++
				}
				b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
