package server_test

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/server"
)

// BenchmarkComposeRouteLargeBody is POST /v1/compose with 2,000 offers of
// 2 KiB (about 4.5 MB): what reading a large body costs next to the rest.
func BenchmarkComposeRouteLargeBody(b *testing.B) {
	h := server.New(nil)
	body := loadgen.ComposeBody(2000, 2048)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", server.PathCompose, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body.String()[:200])
		}
	}
}
