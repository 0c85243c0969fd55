package server_test

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/ctxkit/ctxkit/internal/loadgen"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

// BenchmarkComposeRoute is the per-request cost of POST /v1/compose with 20
// offers of 1 KiB, without the network: decode, validate, compose, encode.
func BenchmarkComposeRoute(b *testing.B) { benchComposeRoute(b, 20, 1024) }

// BenchmarkComposeRouteLargeBody is POST /v1/compose with 2,000 offers of
// 2 KiB (about 4.5 MB): what reading a large body costs next to the rest.
func BenchmarkComposeRouteLargeBody(b *testing.B) { benchComposeRoute(b, 2000, 2048) }

// benchComposeRoute times POST /v1/compose in process with n offers of
// size bytes each.
func benchComposeRoute(b *testing.B, n, size int) {
	h := server.New(nil)
	body := loadgen.ComposeBody(n, size)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("POST", api.PathCompose, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d: %.200s", rec.Code, rec.Body.String())
		}
	}
}
