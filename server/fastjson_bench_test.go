package server

import (
	"testing"

	"github.com/ctxkit/ctxkit/internal/loadgen"
)

// BenchmarkFastComposeDecode: the fast compose decoder alone on the load
// test's body (20 offers of 1 KiB) and on 2,000 offers of 2 KiB.
func BenchmarkFastComposeDecode(b *testing.B) {
	for _, c := range []struct {
		name       string
		offers, kb int
	}{{"offers=20", 20, 1024}, {"offers=2000", 2000, 2048}} {
		body := loadgen.ComposeBody(c.offers, c.kb)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var cb composeBody
				if !cb.decodeFast(body) {
					b.Fatal("declined")
				}
			}
		})
	}
}
