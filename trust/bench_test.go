package trust

import (
	"fmt"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// BenchmarkCheck measures one full per-frame check (structure, store
// lookup, commitment, strict Ed25519) and reports attestations per second.
func BenchmarkCheck(b *testing.B) {
	s := testSigner(b, 1)
	st := trustedStore(b, "prov", s)
	f := sampleFrame("a", true)
	att := s.SignFrame("prov", &f, issued)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if !Check(st, "prov", &f, &att).IsAttested() {
			b.Fatal("not attested")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "attestations/s")
}

// BenchmarkCheckRejectMismatch: a tampered frame is refused before any
// signature arithmetic.
func BenchmarkCheckRejectMismatch(b *testing.B) {
	s := testSigner(b, 1)
	st := trustedStore(b, "prov", s)
	f := sampleFrame("a", true)
	att := s.SignFrame("prov", &f, issued)
	f.ID = "tampered"
	b.ReportAllocs()
	for b.Loop() {
		Check(st, "prov", &f, &att)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "attestations/s")
}

func BenchmarkFrameCommitment(b *testing.B) {
	f := sampleFrame("a", true)
	b.ReportAllocs()
	for b.Loop() {
		FrameCommitment("prov", &f)
	}
}

// BenchmarkResultRoot: root over n frames (commitments + Merkle), and the
// inclusion check of every frame of a root-signed result.
func BenchmarkResultRoot(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		frames := make([]frame.Frame, n)
		for i := range frames {
			frames[i] = sampleFrame(fmt.Sprintf("f%05d", i), true)
		}
		b.Run(fmt.Sprintf("root/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				ResultRoot("prov", frames)
			}
		})
		s := testSigner(b, 1)
		st := trustedStore(b, "prov", s)
		res := signedResult(b, s, "prov", frames, false)
		b.Run(fmt.Sprintf("check-result-inclusion/n=%d", n), func(b *testing.B) {
			for b.Loop() {
				CheckResult(st, "prov", "prov", res)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "attestations/s")
		})
	}
}
