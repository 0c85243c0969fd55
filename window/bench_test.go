package window

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/cputime"
	"github.com/ctxkit/ctxkit/tokens"
)

// longHistory builds n alternating user/assistant messages of about 800
// bytes of English text each: 1,000 of them are about 200,000 tokens as
// Safe counts them.
func longHistory(tb testing.TB, n int) []json.RawMessage {
	prose, err := os.ReadFile("../tokens/testdata/corpus/prose.txt")
	if err != nil {
		tb.Fatal(err)
	}
	words := strings.Fields(string(prose))
	out := make([]json.RawMessage, n)
	for i := range out {
		var sb strings.Builder
		for k := 0; sb.Len() < 800; k++ {
			sb.WriteString(words[(i*37+k)%len(words)])
			sb.WriteByte(' ')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out[i] = raw(tb, obj{"role": role, "content": []any{obj{"type": "text", "text": fmt.Sprintf("[%d] %s", i, sb.String())}}})
	}
	return out
}

// BenchmarkAssess: Assess on a 1,000-message history, first call (every
// message counted) and, through a Session, after appending one message.
func BenchmarkAssess(b *testing.B) {
	for _, bc := range []struct {
		model string
		n     int
	}{{"claude-sonnet-4-6", 250}, {"claude-sonnet-4-6", 1000}, {"claude-sonnet-4-6", 4000}, {"gpt-4o", 1000}} {
		msgs := longHistory(b, bc.n)
		name := fmt.Sprintf("%s/%d", bc.model, bc.n)
		b.Run(name+"/first-call", func(b *testing.B) {
			start := cputime.Process()
			for b.Loop() {
				a := NewSession(&SessionOptions{Model: bc.model}).Assess(msgs)
				if a.HistoryMessages != bc.n {
					b.Fatal(a.HistoryMessages)
				}
			}
			b.ReportMetric(float64((cputime.Process()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
		b.Run(name+"/append-one", func(b *testing.B) {
			s := NewSession(&SessionOptions{Model: bc.model})
			used := s.Assess(msgs).Used()
			// Alternate two distinct appended messages at position n so
			// that every call counts exactly one new message.
			next := [2][]json.RawMessage{
				append(msgs[:bc.n:bc.n], raw(b, obj{"role": "user", "content": "Please summarise the last answer in one line."})),
				append(msgs[:bc.n:bc.n], raw(b, obj{"role": "user", "content": "Now list three follow-up questions."})),
			}
			assessAlternately(b, s, next)
			b.ReportMetric(float64(used), "history-tokens")
		})
	}
}

// BenchmarkEstimatePDF: one message holding a base64 PDF of 2 MB and of
// 20 MB (as base64), next to an image of the same size, to show that the
// page estimate keeps the cost linear in the payload and close to the
// image path's memory scan.
func BenchmarkEstimatePDF(b *testing.B) {
	for _, mb := range []int{2, 20} {
		pdf := base64.StdEncoding.EncodeToString(buildPDF(20, (mb<<20)*3/4/20))
		img := strings.Repeat("QUJD", len(pdf)/4)
		for kind, m := range map[string]json.RawMessage{
			"pdf":   raw(b, obj{"role": "user", "content": []any{documentBlock(pdf)}}),
			"image": raw(b, obj{"role": "user", "content": []any{imageBlock(len(img))}}),
		} {
			b.Run(fmt.Sprintf("%s/%dMB", kind, mb), func(b *testing.B) {
				b.SetBytes(int64(len(m)))
				for b.Loop() {
					if c := estimateMessage(tokens.Safe{}, m, testCharges); c.documents+c.images != 1 {
						b.Fatal(c)
					}
				}
			})
		}
	}
}

// BenchmarkPDFPages: the page scan alone on PDFs of about 1 MB and 4 MB,
// classic (every object in the raw bytes) and PDF 1.5 style (page objects
// in object streams, which are inflated; page text in Flate content
// streams, which are not),
// on a bomb of the same size (one stream that inflates a thousandfold,
// cut at the inflate budget), and on the worst case: object streams of
// page objects repeated, each inflating a few hundredfold, so that the
// whole budget (1 MiB + 16 bytes per byte read) is inflated and matched.
// Sizes are of the decoded PDF.
func BenchmarkPDFPages(b *testing.B) {
	pageBomb := deflate(bytes.Repeat([]byte("<</Type /Page>>\n"), 1<<17), zlib.BestCompression)
	for _, mb := range []int{1, 4} {
		pages := 60 * mb
		z := bomb(1024 * mb)
		var worst bytes.Buffer
		for worst.Len() < mb<<20 {
			fmt.Fprintf(&worst, "<< /Type /ObjStm /Filter /FlateDecode >>\nstream\n%s\nendstream\n", pageBomb)
		}
		for _, bc := range []struct {
			name string
			pdf  []byte
			want int
		}{
			{"classic", buildPDF(pages, (mb<<20)/pages), pages},
			{"objstm", objStmPDF{pages: pages, text: 80 << 10}.build(), pages},
			{"bomb", []byte(fmt.Sprintf("<< /Type /ObjStm /Filter /FlateDecode >>\nstream\n%s\nendstream", z)), 1},
			{"worst", worst.Bytes(), maxPDFPages},
		} {
			enc := base64.StdEncoding.EncodeToString(bc.pdf)
			b.Run(fmt.Sprintf("%s/%dMB", bc.name, mb), func(b *testing.B) {
				b.SetBytes(int64(len(bc.pdf)))
				var d *pdfDoc
				for b.Loop() {
					d = pdfScanDoc(strings.NewReader(enc), pdfBufSize)
				}
				if got := d.pages(); got != bc.want {
					b.Fatalf("%d pages, want %d", got, bc.want)
				}
				b.ReportMetric(float64(len(bc.pdf))/(1<<20), "pdf-MiB")
				b.ReportMetric(float64(d.inflates)/(1<<20), "inflated-MiB")
			})
		}
	}
}

// BenchmarkSessionAppend: the cost of assessing a 1,000-message history
// after appending one realistic message (an 860-byte user message, a 4 KB
// tool result of Go source), with the exact o200k counter and with Safe.
// Two distinct messages alternate at position 1,000 so that each call
// counts one new message; the rest is the per-call walk over the cache.
func BenchmarkSessionAppend(b *testing.B) {
	prose, err := os.ReadFile("../tokens/testdata/corpus/prose.txt")
	if err != nil {
		b.Fatal(err)
	}
	text := func(off, n int) string { return string(prose[off : off+n]) }
	code := strings.Repeat("\tif err != nil {\n\t\treturn fmt.Errorf(\"read %q: %w\", path, err)\n\t}\n", 70)[:4096]
	for _, model := range []string{"gpt-4o", "claude-sonnet-4-6"} {
		msgs := longHistory(b, 1000)
		for _, bc := range []struct {
			name string
			next [2]any
		}{
			{"860B-message", [2]any{
				obj{"role": "user", "content": text(0, 860)},
				obj{"role": "user", "content": text(2000, 860)}}},
			{"4KB-tool-result", [2]any{
				obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": "t1", "content": code}}},
				obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": "t2", "content": code[1:] + "\n"}}}}},
		} {
			b.Run(model+"/"+bc.name, func(b *testing.B) {
				s := NewSession(&SessionOptions{Model: model})
				s.Assess(msgs)
				next := [2][]json.RawMessage{
					append(msgs[:1000:1000], raw(b, bc.next[0])),
					append(msgs[:1000:1000], raw(b, bc.next[1])),
				}
				assessAlternately(b, s, next)
			})
		}
	}
}

// assessAlternately times s.Assess on the two histories in turn, each one
// new message past what s last saw, reporting CPU time per call beside
// wall time.
func assessAlternately(b *testing.B, s *Session, next [2][]json.RawMessage) {
	i := 0
	start := cputime.Process()
	for b.Loop() {
		s.Assess(next[i&1])
		i++
	}
	b.ReportMetric(float64((cputime.Process()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
