package server_test

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/server"
)

// BenchmarkComposeRoute is the per-request cost of POST /v1/compose with 20
// offers of 1 KiB, without the network: decode, validate, compose, encode.
func BenchmarkComposeRoute(b *testing.B) {
	h := server.New(nil)
	body := loadgen.ComposeBody(20, 1024)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", server.PathCompose, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
