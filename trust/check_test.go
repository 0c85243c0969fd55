package trust

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/roundtrip"
	"github.com/ctxkit/ctxkit/wire"
)

const issued = "2026-11-29T12:00:00Z"

func digestOf(s string) string { return digest(sha256.Sum256([]byte(s))).String() }

func sampleFrame(id string, withDigest bool) frame.Frame {
	f := frame.Frame{
		ID: id, Kind: frame.KindDoc, Title: "t " + id, Content: "content of " + id,
		Score: 0.5, CitationLabel: "c " + id,
		Provenance: []frame.Provenance{
			{Type: "file", URI: "file:///r/" + id, Range: "L1-2", Digest: digestOf("src " + id)},
			{Type: "derivation", Method: "chunk", By: "indexer"},
		},
	}
	if withDigest {
		f.ContentDigest = digestOf(f.Content)
	}
	return f
}

func trustedStore(t testing.TB, provider string, s *Signer) *Store {
	t.Helper()
	st := NewStore()
	if err := st.Add(provider, s.KeyID, s.PublicKey()); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSignThenCheck(t *testing.T) {
	s := testSigner(t, 1)
	st := trustedStore(t, "prov", s)
	for _, withDigest := range []bool{true, false} {
		f := sampleFrame("a", withDigest)
		att := s.SignFrame("prov", &f, issued)
		got := Check(st, "prov", &f, &att)
		want := NewAttested(s.KeyID, s.AttesterID, withDigest)
		if got != want {
			t.Fatalf("digest=%v: state %#v, want %#v", withDigest, got, want)
		}
		v := verifyFrame("prov", &f, &att, s.PublicKey())
		if withDigest && v != Valid || !withDigest && v != ValidIdentityOnly {
			t.Fatalf("digest=%v: verdict %v", withDigest, v)
		}
	}
}

// A frame signed with content_digest sent as "" verifies (the commitment
// holds the digest as present and empty, as the reference writes it), but
// the signature binds no content: identity only.
func TestSignedEmptyDigestIsIdentityOnly(t *testing.T) {
	s := testSigner(t, 1)
	st := trustedStore(t, "prov", s)
	f := sampleFrame("a", false)
	f.Set(frame.MemberContentDigest, "")
	att := s.SignFrame("prov", &f, issued)
	if v := verifyFrame("prov", &f, &att, s.PublicKey()); v != ValidIdentityOnly {
		t.Fatalf("verdict %v, want %v", v, ValidIdentityOnly)
	}
	if got, want := Check(st, "prov", &f, &att), NewAttested(s.KeyID, s.AttesterID, false); got != want {
		t.Fatalf("state %#v, want %#v", got, want)
	}
	// Read back as absent, the same signature no longer matches.
	f.Clear(frame.MemberContentDigest)
	if v := verifyFrame("prov", &f, &att, s.PublicKey()); v != CommitmentMismatch {
		t.Fatalf("absent digest: verdict %v, want %v", v, CommitmentMismatch)
	}
}

func TestTamperingIsCommitmentMismatch(t *testing.T) {
	s := testSigner(t, 1)
	st := trustedStore(t, "prov", s)
	base := sampleFrame("a", true)
	att := s.SignFrame("prov", &base, issued)
	type tamper struct {
		name string
		edit func(f *frame.Frame)
	}
	cases := []tamper{
		{"frame id", func(f *frame.Frame) { f.ID = "b" }},
		{"content digest", func(f *frame.Frame) { f.ContentDigest = digestOf("other") }},
		{"content digest removed", func(f *frame.Frame) { f.ContentDigest = "" }},
		{"link order", func(f *frame.Frame) { f.Provenance[0], f.Provenance[1] = f.Provenance[1], f.Provenance[0] }},
		{"link removed", func(f *frame.Frame) { f.Provenance = f.Provenance[:1] }},
		{"link added", func(f *frame.Frame) { f.Provenance = append(f.Provenance, frame.Provenance{Type: "file"}) }},
		{"all links removed", func(f *frame.Frame) { f.Provenance = nil }},
	}
	members := []struct {
		name string
		set  func(p *frame.Provenance)
	}{
		{"type", func(p *frame.Provenance) { p.Type += "x" }},
		{"uri", func(p *frame.Provenance) { p.URI += "x" }},
		{"range", func(p *frame.Provenance) { p.Range += "x" }},
		{"digest", func(p *frame.Provenance) { p.Digest = digestOf("x") }},
		{"method", func(p *frame.Provenance) { p.Method += "x" }},
		{"by", func(p *frame.Provenance) { p.By += "x" }},
	}
	for li := range base.Provenance {
		for _, m := range members {
			cases = append(cases, tamper{fmt.Sprintf("link %d %s", li, m.name), func(f *frame.Frame) { m.set(&f.Provenance[li]) }})
		}
	}
	for _, c := range cases {
		f := base
		f.Provenance = append([]frame.Provenance(nil), base.Provenance...)
		c.edit(&f)
		if got := Check(st, "prov", &f, &att); got != NewInvalid(CommitmentMismatch) {
			t.Errorf("%s: state %#v", c.name, got)
		}
	}
	// Provider name: the same frame committed under another provider name.
	if got := checkNamed(st, "prov", "other-name", &base, &att); got != NewInvalid(CommitmentMismatch) {
		t.Errorf("provider name: %#v", got)
	}
	// Title, content, score and label are outside the commitment: the
	// content is bound through content_digest only.
	f := base
	f.Title, f.Score = "new title", 0.9
	if got := Check(st, "prov", &f, &att); !got.IsAttested() {
		t.Errorf("unsigned members changed the verdict: %#v", got)
	}
	// The signed commitment itself rewritten to match the tampered frame:
	// the signature no longer verifies.
	g := base
	g.ID = "forged"
	forged := att
	forged.SignedCommitment = frameCommitment("prov", &g).String()
	if got := Check(st, "prov", &g, &forged); got != NewInvalid(BadSignature) {
		t.Errorf("re-committed forgery: %#v", got)
	}
	// Unsigned metadata: rewriting attester_id or issued_at keeps it valid
	// (F18), and the state reports the rewritten, unverified label.
	meta := att
	meta.AttesterID, meta.IssuedAt = "someone-else", "1999-01-01T00:00:00Z"
	if got := Check(st, "prov", &base, &meta); got != NewAttested(s.KeyID, "someone-else", true) {
		t.Errorf("metadata rewrite: %#v", got)
	}
}

func TestCheckStates(t *testing.T) {
	s := testSigner(t, 1)
	other := testSigner(t, 2)
	other.KeyID = s.KeyID // same key id, different key: wrong key
	st := trustedStore(t, "prov", s)
	f := sampleFrame("a", true)
	good := s.SignFrame("prov", &f, issued)
	wrong := other.SignFrame("prov", &f, issued)

	upper := good
	upper.Signature = strings.ToUpper(good.Signature)
	upperC := good
	upperC.SignedCommitment = "sha256:" + strings.ToUpper(good.SignedCommitment[7:])
	short := good
	short.Signature = good.Signature[:126]
	nonHex := good
	nonHex.Signature = "zz" + good.Signature[2:]
	shortC := good
	shortC.SignedCommitment = good.SignedCommitment[:70]
	sha512 := good
	sha512.SignedCommitment = "sha512:" + good.SignedCommitment[7:]
	rsa := good
	rsa.Algorithm = "rsa-pss"
	edUpper := good
	edUpper.Algorithm = "Ed25519"
	unknownKey := good
	unknownKey.KeyID = "never-added"

	cases := []struct {
		name  string
		store *Store
		prov  string
		att   *wire.Attestation
		want  State
	}{
		{"good", st, "prov", &good, NewAttested(s.KeyID, s.AttesterID, true)},
		{"none", st, "prov", nil, NewUnattested()},
		{"wrong key", st, "prov", &wrong, NewInvalid(BadSignature)},
		{"unknown key id", st, "prov", &unknownKey, NewNoTrustedKey("never-added")},
		{"key of another provider", st, "prov2", &good, NewNoTrustedKey(s.KeyID)},
		{"nil store", nil, "prov", &good, NewNoTrustedKey(s.KeyID)},
		{"uppercase signature", st, "prov", &upper, NewInvalid(MalformedSignature)},
		{"uppercase commitment", st, "prov", &upperC, NewInvalid(MalformedCommitment)},
		{"short signature", st, "prov", &short, NewInvalid(MalformedSignature)},
		{"non-hex signature", st, "prov", &nonHex, NewInvalid(MalformedSignature)},
		{"short commitment", st, "prov", &shortC, NewInvalid(MalformedCommitment)},
		{"other hash", st, "prov", &sha512, NewInvalid(MalformedCommitment)},
		{"rsa", st, "prov", &rsa, NewUnknownAlgorithm("rsa-pss")},
		{"algorithm case", st, "prov", &edUpper, NewUnknownAlgorithm("Ed25519")},
	}
	for _, c := range cases {
		if got := Check(c.store, c.prov, &f, c.att); got != c.want {
			t.Errorf("%s: %#v, want %#v", c.name, got, c.want)
		}
	}
	// Verdicts directly.
	if v := verifyFrame("prov", &f, &rsa, s.PublicKey()); v != UnknownAlgorithm {
		t.Errorf("verify rsa: %v", v)
	}
	if v := verifyFrame("prov", &f, &wrong, s.PublicKey()); v != BadSignature {
		t.Errorf("verify wrong key: %v", v)
	}
}

// TestStructuralBeforeCommitment: a malformed attestation over a tampered
// frame reports the structural problem, not the mismatch, and a tampered
// frame with a foreign signature reports the mismatch, not the signature.
func TestVerificationOrder(t *testing.T) {
	s := testSigner(t, 1)
	other := testSigner(t, 2)
	other.KeyID = s.KeyID
	st := trustedStore(t, "prov", s)
	f := sampleFrame("a", true)
	att := other.SignFrame("prov", &f, issued)
	g := f
	g.ID = "changed"
	if got := Check(st, "prov", &g, &att); got != NewInvalid(CommitmentMismatch) {
		t.Fatalf("mismatch must come before the signature check: %#v", got)
	}
	att.Signature = att.Signature[:10]
	if got := Check(st, "prov", &g, &att); got != NewInvalid(MalformedSignature) {
		t.Fatalf("structure must come before the commitment: %#v", got)
	}
	att.Algorithm = "x"
	if got := Check(st, "prov", &g, &att); got != NewUnknownAlgorithm("x") {
		t.Fatalf("algorithm first: %#v", got)
	}
}

func signedResult(t testing.TB, s *Signer, name string, frames []frame.Frame, perFrame bool) *wire.Result {
	t.Helper()
	res := &wire.Result{Frames: frames}
	ids, cs := resultCommitments(name, frames)
	if perFrame {
		for i := range frames {
			att := s.SignFrame(name, &frames[i], issued)
			res.FrameAttestations = append(res.FrameAttestations, wire.FrameAttestation{Frame: frames[i].Identity(name), Attestation: &att})
		}
		return res
	}
	root := s.signResult(name, frames, issued)
	res.ResultAttestation = &root
	for i, id := range ids {
		p, err := prove(cs, i)
		if err != nil {
			t.Fatal(err)
		}
		w := p.wire()
		res.FrameAttestations = append(res.FrameAttestations, wire.FrameAttestation{Frame: id, InclusionProof: &w})
	}
	return res
}

func TestCheckResult(t *testing.T) {
	s := testSigner(t, 1)
	st := trustedStore(t, "local-id", s)
	frames := []frame.Frame{sampleFrame("z", true), sampleFrame("a", true), sampleFrame("m", false)}
	for _, perFrame := range []bool{true, false} {
		res := signedResult(t, s, "declared-name", frames, perFrame)
		states := checkResult(st, "local-id", "declared-name", res)
		if len(states) != len(frames) {
			t.Fatalf("%d states for %d frames", len(states), len(frames))
		}
		for i, f := range frames {
			want := NewAttested(s.KeyID, s.AttesterID, f.ContentDigest != "")
			if states[i] != want {
				t.Errorf("perFrame=%v frame %s: %#v, want %#v", perFrame, f.ID, states[i], want)
			}
		}
		// Checked under the wrong name: every commitment differs.
		for _, st2 := range checkResult(st, "local-id", "local-id", res) {
			if st2 != NewInvalid(CommitmentMismatch) {
				t.Errorf("perFrame=%v wrong name: %#v", perFrame, st2)
			}
		}
		// A frame the provider changed after signing: only that frame fails.
		tampered := *res
		tampered.Frames = append([]frame.Frame(nil), res.Frames...)
		tampered.Frames[1].Provenance = nil
		got := checkResult(st, "local-id", "declared-name", &tampered)
		if got[1] != NewInvalid(CommitmentMismatch) || !got[0].IsAttested() || !got[2].IsAttested() {
			t.Errorf("perFrame=%v tampered: %v", perFrame, got)
		}
	}
	// A result with no attestations: every frame Unattested, none dropped.
	plain := &wire.Result{Frames: frames}
	for _, s := range checkResult(st, "local-id", "declared-name", plain) {
		if s != NewUnattested() {
			t.Errorf("plain: %#v", s)
		}
	}
	// An entry with neither signature nor proof is noise: Unattested.
	noise := &wire.Result{Frames: frames[:1], FrameAttestations: []wire.FrameAttestation{{Frame: frames[0].Identity("x")}}}
	if got := checkResult(st, "local-id", "declared-name", noise); got[0] != NewUnattested() {
		t.Errorf("noise entry: %#v", got[0])
	}
	// Entries beyond len(frames) are not examined.
	res := signedResult(t, s, "declared-name", frames, true)
	flood := &wire.Result{Frames: frames[:1]}
	for range 1000 {
		flood.FrameAttestations = append(flood.FrameAttestations, res.FrameAttestations[1])
	}
	flood.FrameAttestations = append(flood.FrameAttestations, res.FrameAttestations[0])
	if got := checkResult(st, "local-id", "declared-name", flood); got[0] != NewUnattested() {
		t.Errorf("flood: entry beyond len(frames) was used: %#v", got[0])
	}
}

func TestLedger(t *testing.T) {
	var nilLedger *Ledger
	id := frame.ID{Provider: "p", Frame: "f"}
	if nilLedger.State(id).kind != notChecked || nilLedger.size() != 0 || len(nilLedger.Entries()) != 0 {
		t.Fatal("nil ledger not empty")
	}
	s := testSigner(t, 1)
	st := trustedStore(t, "local", s)
	frames := []frame.Frame{sampleFrame("b", true), sampleFrame("a", false), sampleFrame("c", true)}
	res := signedResult(t, s, "local", frames, true)
	res.FrameAttestations = res.FrameAttestations[:2] // c unattested
	l := NewLedger()
	states := l.AddResult(st, "local", "local", res)
	if l.size() != 3 {
		t.Fatalf("len %d", l.size())
	}
	for i, f := range frames {
		if l.State(f.Identity("local")) != states[i] {
			t.Errorf("frame %s: ledger %v, CheckResult %v", f.ID, l.State(f.Identity("local")), states[i])
		}
	}
	if l.State(frames[2].Identity("local")) != NewUnattested() {
		t.Error("c should be unattested")
	}
	if l.State(frames[0].Identity("other-provider")).kind != notChecked {
		t.Error("absent identity is not NotChecked")
	}
	es := l.Entries()
	for i := 1; i < len(es); i++ {
		if es[i-1].Frame.Compare(es[i].Frame) >= 0 {
			t.Fatal("entries not in canonical order")
		}
	}
	back, b := roundtrip.JSON[Ledger](t, l)
	if back.size() != 3 {
		t.Fatalf("round trip kept %d entries of %s", back.size(), b)
	}
	l.Set(frames[0].Identity("local"), State{})
	if l.size() != 2 {
		t.Fatal("setting NotChecked did not remove the entry")
	}
	dup := `[{"frame":{"provider_id":"p","frame_id":"f"},"attestation":{"state":"unattested"}},{"frame":{"provider_id":"p","frame_id":"f"},"attestation":{"state":"unattested"}}]`
	if err := json.Unmarshal([]byte(dup), &back); err == nil {
		t.Fatal("duplicate identity accepted")
	}
}

// TestCheckResultRootOnceAgreesWithCheckInclusion: verifying the root's
// signature once per result gives each frame exactly the state
// checkInclusion gives it alone, for good, forged and tampered results.
func TestCheckResultRootOnceAgreesWithCheckInclusion(t *testing.T) {
	s := testSigner(t, 1)
	st := trustedStore(t, "prov", s)
	frames := []frame.Frame{sampleFrame("a", true), sampleFrame("b", false), sampleFrame("c", true), sampleFrame("d", true)}
	good := signedResult(t, s, "prov", frames, false)

	forged := *good
	bad := *good.ResultAttestation
	flip := []byte(bad.Signature)
	flip[10] ^= 1 // a bit of R: still hex, no longer the signer's R
	bad.Signature = string(flip)
	forged.ResultAttestation = &bad

	tampered := *good
	tampered.Frames = append([]frame.Frame(nil), good.Frames...)
	tampered.Frames[2].ID = "c2"
	tampered.FrameAttestations = append([]wire.FrameAttestation(nil), good.FrameAttestations...)
	tampered.FrameAttestations[2].Frame.Frame = "c2"

	unknownKey := *good
	uk := *good.ResultAttestation
	uk.KeyID = "nobody"
	unknownKey.ResultAttestation = &uk

	for name, res := range map[string]*wire.Result{"good": good, "forged": &forged, "tampered": &tampered, "unknown key": &unknownKey} {
		states := checkResult(st, "prov", "prov", res)
		for i := range res.Frames {
			f := &res.Frames[i]
			var proof *wire.InclusionProof
			for _, e := range res.FrameAttestations {
				if e.Frame.Frame == f.ID && e.Frame.Digest == f.ContentDigest {
					proof = e.InclusionProof
				}
			}
			want := checkInclusion(st, "prov", "prov", f, *proof, res.ResultAttestation)
			if states[i] != want {
				t.Errorf("%s frame %s: CheckResult %#v, CheckInclusion %#v", name, f.ID, states[i], want)
			}
		}
		if name == "forged" && states[0] != NewInvalid(BadSignature) {
			t.Errorf("forged root: %#v", states[0])
		}
		if name == "tampered" && (states[2] != NewInvalid(CommitmentMismatch) || !states[0].IsAttested()) {
			t.Errorf("tampered: %v", states)
		}
		if name == "unknown key" && states[1] != NewNoTrustedKey("nobody") {
			t.Errorf("unknown key: %#v", states[1])
		}
	}
}
