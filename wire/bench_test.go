package wire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// framesEnvelope builds a frames envelope of n valid frames, each carrying
// size bytes of content, encoded as one NDJSON line.
func framesEnvelope(tb testing.TB, n, size int) []byte {
	tb.Helper()
	content := strings.Repeat("retry with backoff <a> & \"q\"\n", size/29+1)[:size]
	r := Result{Frames: make([]frame.Frame, n)}
	for i := range r.Frames {
		r.Frames[i] = frame.Frame{
			ID: fmt.Sprintf("frame-%03d", i), Kind: frame.KindSnippet, Title: "Retry policy",
			Content: content, ContentDigest: "sha256:" + strings.Repeat("ab", 32),
			URI: "file:///repo/src/retry.rs", Score: 0.875, TokenCost: uint32(frame.BudgetTokens(content)),
			RecordedAt: "2026-07-21T12:34:56Z", CitationLabel: "retry.rs L10-18",
			Provenance: []frame.Provenance{{Type: frame.ProvenanceFile, URI: "file:///repo/src/retry.rs",
				Range: "L10-18", Digest: "sha256:" + strings.Repeat("cd", 32), Method: "file-read", By: "indexer"}},
		}
	}
	b, err := Marshal(&Frames{ID: "q1", Result: r})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestBenchmarkEnvelopeIsValid(t *testing.T) {
	env, err := Unmarshal(framesEnvelope(t, 100, 1024))
	if err != nil {
		t.Fatal(err)
	}
	if v := validate(env); len(v) != 0 || len(env.(*Frames).Result.Frames) != 100 {
		t.Fatal(v)
	}
}

// BenchmarkDecodeValidateFrames measures decode + validate of a frames
// envelope of 100 frames × 1 KiB of content (about 130 KB per line).
func BenchmarkDecodeValidateFrames(b *testing.B) {
	line := framesEnvelope(b, 100, 1024)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		env, err := Unmarshal(line)
		if err != nil {
			b.Fatal(err)
		}
		if v := validate(env); len(v) != 0 {
			b.Fatal(v)
		}
	}
}

// BenchmarkEncodeFrames measures encoding the same envelope.
func BenchmarkEncodeFrames(b *testing.B) {
	env, err := Unmarshal(framesEnvelope(b, 100, 1024))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(framesEnvelope(b, 100, 1024))))
	b.ReportAllocs()
	buf := make([]byte, 0, 256<<10)
	for b.Loop() {
		if buf, err = appendEnvelope(buf[:0], env); err != nil {
			b.Fatal(err)
		}
	}
}
