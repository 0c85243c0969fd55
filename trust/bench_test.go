package trust

import (
	"crypto/ed25519"
	"fmt"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cputime"
)

// BenchmarkCheck measures one full per-frame check (structure, store
// lookup, commitment, strict Ed25519) and reports attestations per second.
func BenchmarkCheck(b *testing.B) {
	s := testSigner(b, 1)
	st := trustedStore(b, "prov", s)
	f := sampleFrame("a", true)
	att := s.SignFrame("prov", &f, issued)
	b.ReportAllocs()
	c0 := cputime.Process()
	for b.Loop() {
		if !Check(st, "prov", &f, &att).IsAttested() {
			b.Fatal("not attested")
		}
	}
	reportRates(b, b.N, cputime.Process()-c0)
}

// reportRates reports attestations per wall-clock second and, where the
// platform reports CPU time, per CPU-second (robust on a loaded machine).
func reportRates(b *testing.B, n int, cpu time.Duration) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "attestations/s")
	if cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "attestations/cpu-s")
	}
}

// BenchmarkEd25519Verify is the floor: crypto/ed25519.Verify alone on the
// same 32-byte message, for the ratio Check / raw verify.
func BenchmarkEd25519Verify(b *testing.B) {
	s := testSigner(b, 1)
	c := frameCommitment("prov", &frame.Frame{ID: "a"})
	sig := ed25519.Sign(s.priv, c[:])
	pub := s.PublicKey().bytes()
	c0 := cputime.Process()
	for b.Loop() {
		if !ed25519.Verify(pub, c[:], sig) {
			b.Fatal("verify")
		}
	}
	reportRates(b, b.N, cputime.Process()-c0)
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
	c0 := cputime.Process()
	for b.Loop() {
		Check(st, "prov", &f, &att)
	}
	reportRates(b, b.N, cputime.Process()-c0)
}

func BenchmarkFrameCommitment(b *testing.B) {
	f := sampleFrame("a", true)
	b.ReportAllocs()
	for b.Loop() {
		frameCommitment("prov", &f)
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
				resultRoot("prov", frames)
			}
		})
		s := testSigner(b, 1)
		st := trustedStore(b, "prov", s)
		for _, kind := range []struct {
			name     string
			perFrame bool
		}{{"inclusion", false}, {"per-frame", true}} {
			res := signedResult(b, s, "prov", frames, kind.perFrame)
			b.Run(fmt.Sprintf("check-result-%s/n=%d", kind.name, n), func(b *testing.B) {
				c0 := cputime.Process()
				for b.Loop() {
					checkResult(st, "prov", "prov", res)
				}
				reportRates(b, b.N*n, cputime.Process()-c0)
			})
		}
	}
}
