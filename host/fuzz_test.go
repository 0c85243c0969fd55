package host

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
)

// FuzzConsentJournal: loading any journal bytes never panics; it either
// fails or yields a store whose receipts all name a provider and scope.
func FuzzConsentJournal(f *testing.F) {
	f.Add([]byte(`{"op":"receipt","receipt":{"provider_id":"p","scope":"a:b","provider_name":"","provider_version":"","grantor":{"kind":"human","id":"x"},"granted_at":"2026-01-01T00:00:00Z"}}` + "\n"))
	f.Add([]byte(`{"op":"record","record":{"provider_id":"p","data_flow":{"reads":false,"writes":false,"egress":true},"granted_scope":"egress"}}` + "\n{\"op\":\"revoke\",\"provider_id\":\"p\"}\n"))
	f.Add([]byte("{\"op\":\"nope\"}\n"))
	f.Add([]byte("torn"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "c")
		os.WriteFile(p, data, 0o600)
		s, err := consent.Open(p)
		if err != nil {
			return
		}
		for _, r := range s.Receipts() {
			if r.ProviderID == "" || r.Scope == "" {
				t.Fatalf("empty receipt loaded: %+v", r)
			}
		}
	})
}

// FuzzSelectLines agrees with a direct line split.
func FuzzSelectLines(f *testing.F) {
	f.Add("a\nb\r\nc", 2, 3)
	f.Add("", 1, 1)
	f.Add("x\n", 1, 5)
	f.Add("x\n\n", 2, 2)
	f.Fuzz(func(t *testing.T, text string, a, b int) {
		if a < 1 || b < a || a > 1000 {
			return
		}
		got, ok := selectLines([]byte(text), a, b)
		var lines []string
		for _, l := range strings.SplitAfter(text, "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
		if a > len(lines) {
			if ok {
				t.Fatalf("range L%d-%d of %d lines accepted", a, b, len(lines))
			}
			return
		}
		want := strings.Join(lines[a-1:min(b, len(lines))], "")
		if !ok || string(got) != want {
			t.Fatalf("L%d-%d of %q = %q,%v want %q", a, b, text, got, ok, want)
		}
	})
}

// FuzzProvenanceURI: no provenance link, however malformed, makes the
// verifier read outside its root or panic.
func FuzzProvenanceURI(f *testing.F) {
	f.Add("file:///etc/passwd", "L1")
	f.Add("file://localhost/../../etc/passwd", "")
	f.Add("file:///%2e%2e/x", "L1-2")
	f.Add("http://x/y", "L3")
	f.Fuzz(func(t *testing.T, uri, rng string) {
		root := t.TempDir()
		c := VerifyFileProvenance(frame.Provenance{Type: "file", URI: uri, Range: rng, Digest: "sha256:" + strings.Repeat("0", 64)}, []string{root})
		if c.Status == ProvenanceVerified || c.Status == ProvenanceMismatch {
			t.Fatalf("read something for %q under an empty root: %+v", uri, c)
		}
	})
}
