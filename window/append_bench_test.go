package window

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/cputime"
)

// BenchmarkSessionAppendExact: a 1,000-message Session with the exact
// o200k_base counter (gpt-4o), then one new message appended per call — an
// 860-byte user message, or a 4 KB tool result — each distinct, so every
// call counts its new message rather than finding it in a cache.
// cpu-ns/op is the figure issue 20 bounds (50 µs and 150 µs).
func BenchmarkSessionAppendExact(b *testing.B) {
	msgs := longHistory(b, 1000)
	prose, err := os.ReadFile("../tokens/testdata/corpus/prose.txt")
	if err != nil {
		b.Fatal(err)
	}
	words := strings.Fields(string(prose))
	r := rand.New(rand.NewPCG(8, 60))
	// text draws words at random: each message is new text.
	text := func(i, size int, json bool) string {
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
		return sb.String()[:size]
	}
	for _, bc := range []struct {
		name string
		make func(i int) json.RawMessage
	}{
		{"message-860B", func(i int) json.RawMessage {
			return raw(b, obj{"role": "user", "content": text(i, 860, false)})
		}},
		{"tool-result-4KB", func(i int) json.RawMessage {
			return raw(b, obj{"role": "tool", "tool_call_id": "call_1", "content": text(i, 4096, true)})
		}},
	} {
		// More distinct messages than the counter's cache holds, so no
		// call finds its message counted already.
		const distinct = 3000
		added := make([]json.RawMessage, distinct)
		for i := range added {
			added[i] = bc.make(i)
		}
		next := append(msgs[:1000:1000], nil)
		b.Run(bc.name, func(b *testing.B) {
			s := NewSession(&SessionOptions{Model: "gpt-4o"})
			s.Assess(msgs)
			i := 0
			start := cputime.Process()
			for b.Loop() {
				next[1000] = added[i%distinct]
				s.Assess(next)
				i++
			}
			b.ReportMetric(float64((cputime.Process()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(len(added[0])), "message-bytes")
		})
	}
}
