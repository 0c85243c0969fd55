package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

func sha(b string) string {
	s := sha256.Sum256([]byte(b))
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestProvenanceBytes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "abc.txt")
	os.WriteFile(p, []byte("abc"), 0o600)
	uri := "file://" + p
	roots := []string{dir}
	bad := VerifyFileProvenance(frame.Provenance{Type: "file", URI: uri, Digest: "sha256:" + string(make64('a'))}, roots)
	if bad.Status != ProvenanceMismatch || bad.Actual != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("mismatch case: %+v", bad)
	}
	good := VerifyFileProvenance(frame.Provenance{Type: "file", URI: uri, Digest: "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}, roots)
	if good.Status != ProvenanceVerified {
		t.Fatalf("match case: %+v", good)
	}
}

func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}

func TestProvenanceRangesAndRefusals(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	text := "one\ntwo\r\nthree\nfour"
	os.WriteFile(filepath.Join(root, "f.txt"), []byte(text), 0o600)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o600)
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "escape.txt"))
	os.Symlink(filepath.Join(root, "f.txt"), filepath.Join(root, "inside.txt"))
	roots := []string{root}
	cases := []struct {
		name string
		p    frame.Provenance
		want ProvenanceStatus
	}{
		{"line 2 with CR", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Range: "L2", Digest: sha("two\r\n")}, ProvenanceVerified},
		{"range 2-3", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Range: "L2-3", Digest: sha("two\r\nthree\n")}, ProvenanceVerified},
		{"end clamped", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Range: "L3-99", Digest: sha("three\nfour")}, ProvenanceVerified},
		{"whole file", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Digest: sha(text)}, ProvenanceVerified},
		{"localhost authority", frame.Provenance{Type: "file", URI: "file://localhost" + root + "/f.txt", Digest: sha(text)}, ProvenanceVerified},
		{"percent-escaped", frame.Provenance{Type: "file", URI: "file://" + root + "/%66.txt", Digest: sha(text)}, ProvenanceVerified},
		{"symlink inside", frame.Provenance{Type: "file", URI: "file://" + root + "/inside.txt", Digest: sha(text)}, ProvenanceVerified},
		{"start past end", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Range: "L9", Digest: sha("")}, ProvenanceUnreadable},
		{"bad range", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Range: "L0-2", Digest: sha("")}, ProvenanceUnreadable},
		{"github range", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Range: "L1-L2", Digest: sha("")}, ProvenanceUnreadable},
		{"no digest", frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt"}, ProvenanceUnreadable},
		{"outside root", frame.Provenance{Type: "file", URI: "file://" + outside + "/secret.txt", Digest: sha("secret")}, ProvenanceRefused},
		{"dotdot escape", frame.Provenance{Type: "file", URI: "file://" + root + "/../" + filepath.Base(outside) + "/secret.txt", Digest: sha("secret")}, ProvenanceRefused},
		{"symlink escape", frame.Provenance{Type: "file", URI: "file://" + root + "/escape.txt", Digest: sha("secret")}, ProvenanceRefused},
		{"remote authority", frame.Provenance{Type: "file", URI: "file://evil.example" + root + "/f.txt", Digest: sha(text)}, ProvenanceRefused},
		{"not file", frame.Provenance{Type: "derivation", URI: "file://" + root + "/f.txt", Digest: sha(text)}, ProvenanceNotFile},
	}
	emptyRange := frame.Provenance{Type: "file", URI: "file://" + root + "/f.txt", Digest: sha(text)}
	emptyRange.Set(frame.MemberRange, "")
	cases = append(cases, struct {
		name string
		p    frame.Provenance
		want ProvenanceStatus
	}{"range sent as empty", emptyRange, ProvenanceUnreadable})
	for _, c := range cases {
		if got := VerifyFileProvenance(c.p, roots); got.Status != c.want {
			t.Errorf("%s: %v (%s), want %v", c.name, got.Status, got.Reason, c.want)
		}
	}
	if got := VerifyFileProvenance(cases[0].p, nil); got.Status != ProvenanceRefused {
		t.Errorf("no roots: %v", got.Status)
	}
}

// verdicter answers verify with canned verdicts (possibly reordered,
// missing, or for identities never asked).
type verdicter struct {
	honest
	verdicts []wire.Verdict
	asked    chan []frame.ID
}

func (v *verdicter) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) {
	if v.asked != nil {
		v.asked <- ids
	}
	return v.verdicts, nil
}

type noVerify struct{ honest }

func (n *noVerify) Handshake(ctx context.Context, s string) (*wire.HandshakeAck, error) {
	a, _ := n.honest.Handshake(ctx, s)
	a.Capabilities.Verify = false
	return a, nil
}

func TestVerify(t *testing.T) {
	d := func(c byte) string { return "sha256:" + string(make64(c)) }
	valid := frame.ID{Provider: "p", Frame: "valid", Digest: d('a')}
	stale := frame.ID{Provider: "p", Frame: "stale", Digest: d('b')}
	gone := frame.ID{Provider: "p", Frame: "gone", Digest: d('c')}
	missing := frame.ID{Provider: "p", Frame: "missing", Digest: d('d')}
	nodigest := frame.ID{Provider: "p", Frame: "nodigest"}
	other := frame.ID{Provider: "nv", Frame: "x", Digest: d('e')}
	nobody := frame.ID{Provider: "ghost", Frame: "x", Digest: d('f')}
	asked := make(chan []frame.ID, 1)
	h := New(nil)
	defer h.Close(context.Background())
	h.AddInProcess("p", &verdicter{asked: asked, verdicts: []wire.Verdict{
		// reversed order, one extra, one missing: matched by identity
		{Frame: gone, Status: wire.StatusGone},
		{Frame: frame.ID{Provider: "p", Frame: "extra", Digest: d('9')}, Status: wire.StatusValid},
		{Frame: stale, Status: wire.StatusStale, ReplacementDigest: d('1')},
		{Frame: valid, Status: wire.StatusValid},
		// a verdict for the right frame id but another digest is not a verdict for valid
		{Frame: frame.ID{Provider: "p", Frame: "missing", Digest: d('2')}, Status: wire.StatusValid},
	}})
	nvAsked := make(chan frame.Query, 1)
	h.AddInProcess("nv", &noVerify{honest{seen: nvAsked}})
	held := []frame.ID{valid, stale, gone, missing, nodigest, other, nobody}
	out := h.Verify(context.Background(), held)
	if len(out.Retained) != 1 || out.Retained[0] != valid {
		t.Fatalf("retained = %v", out.Retained)
	}
	want := map[string]string{"stale": dropStale, "gone": dropGone, "missing": dropUnknown, "nodigest": dropNoDigest}
	if len(out.Dropped) != 6 {
		t.Fatalf("dropped = %+v", out.Dropped)
	}
	for _, dr := range out.Dropped {
		switch dr.Frame.Provider {
		case "nv":
			if dr.Reason != dropVerifyUnsupported {
				t.Errorf("nv: %v", dr.Reason)
			}
		case "ghost":
			if dr.Reason != dropUnknownProvider {
				t.Errorf("ghost: %v", dr.Reason)
			}
		default:
			if dr.Reason != want[dr.Frame.Frame] {
				t.Errorf("%s: %v, want %v", dr.Frame.Frame, dr.Reason, want[dr.Frame.Frame])
			}
		}
		if dr.Frame.Frame == "stale" && dr.ReplacementDigest != d('1') {
			t.Errorf("stale replacement = %q", dr.ReplacementDigest)
		}
	}
	sent := <-asked
	for _, id := range sent {
		if id.Digest == "" {
			t.Errorf("digest-less identity sent: %v", id)
		}
	}
	if len(sent) != 4 {
		t.Errorf("sent %d identities, want 4", len(sent))
	}
}
