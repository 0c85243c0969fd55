package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

var update = flag.Bool("update", false, "rewrite testdata/attestation-vectors.json from the code")

const vectorsFile = "attestation-vectors.json"

// The vector file is self-contained: another implementation reads the
// inputs, computes, and compares with the expected values. Hashes and keys
// are lowercase hex; digests carry the "sha256:" prefix.
type vectorFile struct {
	About      []string        `json:"about"`
	Links      []linkVector    `json:"links"`
	Chains     []chainVector   `json:"chains"`
	Frames     []frameVector   `json:"frames"`
	Merkle     []merkleVector  `json:"merkle"`
	Signatures []signatureVect `json:"signatures"`
}

type linkVector struct {
	Link        frame.Provenance `json:"link"`
	EncodingHex string           `json:"encoding_hex"`
}

type chainVector struct {
	Provenance []frame.Provenance `json:"provenance"`
	Head       string             `json:"head"`
}

type frameVector struct {
	ProviderName  string             `json:"provider_name"`
	FrameID       string             `json:"frame_id"`
	ContentDigest string             `json:"content_digest,omitempty"`
	Provenance    []frame.Provenance `json:"provenance"`
	PreimageHex   string             `json:"preimage_hex"`
	Commitment    string             `json:"commitment"`
}

type merkleVector struct {
	Leaves []string         `json:"leaves"`
	Root   string           `json:"root"`
	Proofs []inclusionProof `json:"proofs"`
}

type signatureVect struct {
	SeedHex      string `json:"seed_hex"`
	PublicKeyHex string `json:"public_key_hex"`
	Fingerprint  string `json:"fingerprint"`
	Commitment   string `json:"commitment"`
	SignatureHex string `json:"signature_hex"`
}

func vectorInputs() vectorFile {
	digest := func(s string) string { return digest(sha256.Sum256([]byte(s))).String() }
	links := []frame.Provenance{
		{Type: "file"},
		{Type: "file", URI: "file:///repo/src/retry.go", Range: "L10-20", Digest: digest("retry.go")},
		{Type: "derivation", Method: "summarize", By: "model:small"},
		{Type: "episode", URI: "ab", Range: "c"},
		{Type: "episode", URI: "a", Range: "bc"},
		{Type: "file", URI: "file:///données/日本.md", Digest: digest("日本")},
	}
	v := vectorFile{About: []string{
		"ctxkit attestation test vectors (CGP contextgraph/1 attestation, docs/protocol.md §4.4).",
		"encoding: enc_str(s) = u32 big-endian byte length || UTF-8 bytes; enc_opt(absent) = 00; enc_opt(s) = 01 || enc_str(s).",
		"link encoding = enc_str(type) || enc_opt(uri) || enc_opt(range) || enc_opt(digest) || enc_opt(method) || enc_opt(by); a member absent from the JSON is absent.",
		"chain: h = SHA256('contextgraph/attest/1/genesis'); per link, in order: h = SHA256('contextgraph/attest/1/link' || h || encoding).",
		"frame preimage = 'contextgraph/attest/1/frame' || enc_str(provider_name) || enc_str(frame_id) || enc_opt(content_digest) || chain_head; commitment = SHA256(preimage).",
		"merkle (RFC 6962): leaf = SHA256(00 || commitment); node = SHA256(01 || left || right); split at the largest power of two < n; empty = SHA256('contextgraph/attest/1/merkle-empty'). Proof paths run leaf to root.",
		"signatures: Ed25519 (RFC 8032) over the 32 raw commitment bytes; the key is derived from the 32-byte seed; fingerprint = 'sha256:' || hex(SHA256(public key bytes)).",
	}}
	for _, l := range links {
		v.Links = append(v.Links, linkVector{Link: l})
	}
	v.Chains = []chainVector{
		{Provenance: []frame.Provenance{}},
		{Provenance: links[:1]},
		{Provenance: links[1:3]},
		{Provenance: []frame.Provenance{links[2], links[1]}},
		{Provenance: links},
	}
	v.Frames = []frameVector{
		{ProviderName: "repo-indexer", FrameID: "frame:policy:retry", ContentDigest: digest("retry policy"), Provenance: links[1:3]},
		{ProviderName: "repo-indexer", FrameID: "frame:policy:retry", Provenance: links[1:3]},
		{ProviderName: "repo-indexer", FrameID: "frame:minimal", Provenance: []frame.Provenance{}},
		{ProviderName: "docs", FrameID: "frame:policy:retry", ContentDigest: digest("retry policy"), Provenance: links[1:3]},
		{ProviderName: "ünïcode-prov", FrameID: "ид:1", ContentDigest: digest("x"), Provenance: links[5:]},
	}
	for _, n := range []int{0, 1, 2, 3, 5, 8} {
		var m merkleVector
		for i := 0; i < n; i++ {
			m.Leaves = append(m.Leaves, digest("leaf "+string(rune('a'+i))))
		}
		v.Merkle = append(v.Merkle, m)
	}
	for _, seed := range []string{strings.Repeat("00", 32), strings.Repeat("07", 32), "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"} {
		v.Signatures = append(v.Signatures, signatureVect{SeedHex: seed, Commitment: digest("commitment for " + seed[:4])})
	}
	return v
}

// computeVectors fills every expected value of v from the code under test.
func computeVectors(t *testing.T, v *vectorFile) {
	t.Helper()
	for i := range v.Links {
		v.Links[i].EncodingHex = hex.EncodeToString(encodeLink(v.Links[i].Link))
	}
	for i := range v.Chains {
		v.Chains[i].Head = chainHead(v.Chains[i].Provenance).String()
	}
	for i := range v.Frames {
		fv := &v.Frames[i]
		f := &frame.Frame{ID: fv.FrameID, ContentDigest: fv.ContentDigest, Provenance: fv.Provenance}
		head := chainHead(fv.Provenance)
		pre := appendStr(appendStr([]byte(tagFrame), fv.ProviderName), fv.FrameID)
		pre = appendOpt(pre, opt{s: fv.ContentDigest, ok: fv.ContentDigest != ""}) // the vectors spell absent as ""
		pre = append(pre, head[:]...)
		fv.PreimageHex = hex.EncodeToString(pre)
		fv.Commitment = frameCommitment(fv.ProviderName, f).String()
	}
	for i := range v.Merkle {
		m := &v.Merkle[i]
		cs := make([]digest, len(m.Leaves))
		for j, l := range m.Leaves {
			d, err := parseDigest(l)
			if err != nil {
				t.Fatal(err)
			}
			cs[j] = d
		}
		m.Root = merkleRoot(cs).String()
		m.Proofs = nil
		for j := range cs {
			p, err := prove(cs, j)
			if err != nil {
				t.Fatal(err)
			}
			if p.Path == nil {
				p.Path = []proofStep{}
			}
			m.Proofs = append(m.Proofs, p)
		}
	}
	for i := range v.Signatures {
		sv := &v.Signatures[i]
		seed, err := hex.DecodeString(sv.SeedHex)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSigner(seed, "k", "a")
		if err != nil {
			t.Fatal(err)
		}
		c, err := parseDigest(sv.Commitment)
		if err != nil {
			t.Fatal(err)
		}
		sv.PublicKeyHex = s.PublicKey().String()
		sv.Fingerprint = s.PublicKey().Fingerprint()
		sv.SignatureHex = s.signCommitment(c, "2026-01-01T00:00:00Z").Signature
	}
}

func TestVectors(t *testing.T) {
	path := filepath.Join("testdata", vectorsFile)
	if *update {
		v := vectorInputs()
		computeVectors(t, &v)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want vectorFile
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want.Links) < 5 || len(want.Frames) < 4 || len(want.Merkle) < 5 || len(want.Signatures) < 3 {
		t.Fatalf("vector file too small: %d links %d frames %d trees %d signatures", len(want.Links), len(want.Frames), len(want.Merkle), len(want.Signatures))
	}
	got := want
	got.Links = append([]linkVector(nil), want.Links...)
	got.Chains = append([]chainVector(nil), want.Chains...)
	got.Frames = append([]frameVector(nil), want.Frames...)
	got.Merkle = append([]merkleVector(nil), want.Merkle...)
	got.Signatures = append([]signatureVect(nil), want.Signatures...)
	computeVectors(t, &got)
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) {
		t.Fatalf("vectors differ from the code (run go test -run TestVectors -update to regenerate after a deliberate change)\nwant %s\ngot  %s", a, b)
	}
	// The published signatures verify, and the preimage hashes to the
	// commitment.
	for _, sv := range want.Signatures {
		k, err := ParsePublicKey(sv.PublicKeyHex)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := parseDigest(sv.Commitment)
		att := wire.Attestation{SignedCommitment: sv.Commitment, Algorithm: algorithmEd25519, Signature: sv.SignatureHex}
		if v := verifyCommitment(c, &att, k); v != Valid {
			t.Fatalf("published signature: %v", v)
		}
	}
	for _, fv := range want.Frames {
		pre, _ := hex.DecodeString(fv.PreimageHex)
		if digest(sha256.Sum256(pre)).String() != fv.Commitment {
			t.Fatalf("preimage of %s does not hash to its commitment", fv.FrameID)
		}
	}
}

// TestRFC8032Vector pins the signing path to RFC 8032 §7.1 TEST 1 (empty
// message), so the published signatures are plain Ed25519.
func TestRFC8032Vector(t *testing.T) {
	seed, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	s, err := NewSigner(seed, "k", "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.PublicKey().String(); got != "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a" {
		t.Fatalf("public key %s", got)
	}
}

// TestCommitmentByHand spells out one preimage byte by byte, independently
// of the encoder, so the vectors are anchored to the written rule.
func TestCommitmentByHand(t *testing.T) {
	link := frame.Provenance{Type: "file", URI: "u", Method: "m"}
	wantLink := []byte{0, 0, 0, 4, 'f', 'i', 'l', 'e', 1, 0, 0, 0, 1, 'u', 0, 0, 1, 0, 0, 0, 1, 'm', 0}
	if got := encodeLink(link); !bytes.Equal(got, wantLink) {
		t.Fatalf("link encoding %x, want %x", got, wantLink)
	}
	g := sha256.Sum256([]byte("contextgraph/attest/1/genesis"))
	h := sha256.Sum256(append(append([]byte("contextgraph/attest/1/link"), g[:]...), wantLink...))
	if chainHead([]frame.Provenance{link}) != digest(h) {
		t.Fatal("chain head")
	}
	if chainHead(nil) != digest(g) {
		t.Fatal("empty chain head is not the genesis hash")
	}
	pre := []byte("contextgraph/attest/1/frame")
	pre = append(pre, 0, 0, 0, 2, 'p', '1')
	pre = append(pre, 0, 0, 0, 3, 'f', 'i', 'd')
	pre = append(pre, 1, 0, 0, 0, 71)
	dg := "sha256:" + strings.Repeat("ab", 32)
	pre = append(pre, dg...)
	pre = append(pre, h[:]...)
	f := &frame.Frame{ID: "fid", ContentDigest: dg, Provenance: []frame.Provenance{link}}
	if frameCommitment("p1", f) != digest(sha256.Sum256(pre)) {
		t.Fatal("frame commitment")
	}
	// Without a digest: a single 00 byte.
	pre2 := []byte("contextgraph/attest/1/frame")
	pre2 = append(pre2, 0, 0, 0, 2, 'p', '1', 0, 0, 0, 3, 'f', 'i', 'd', 0)
	pre2 = append(pre2, h[:]...)
	f.ContentDigest = ""
	if frameCommitment("p1", f) != digest(sha256.Sum256(pre2)) {
		t.Fatal("frame commitment without digest")
	}
	// A digest sent as "" is present: 01 and a zero length, as the
	// reference encodes Some("").
	pre3 := []byte("contextgraph/attest/1/frame")
	pre3 = append(pre3, 0, 0, 0, 2, 'p', '1', 0, 0, 0, 3, 'f', 'i', 'd', 1, 0, 0, 0, 0)
	pre3 = append(pre3, h[:]...)
	f.Set(frame.MemberContentDigest, "")
	if frameCommitment("p1", f) != digest(sha256.Sum256(pre3)) {
		t.Fatal("frame commitment with a present empty digest")
	}
}

func TestEncodingIsInjective(t *testing.T) {
	a := frame.Provenance{Type: "episode", URI: "ab", Range: "c"}
	b := frame.Provenance{Type: "episode", URI: "a", Range: "bc"}
	c := frame.Provenance{Type: "episode", URI: "abc"}
	d := frame.Provenance{Type: "episode", Range: "abc"}
	seen := map[string]frame.Provenance{}
	for _, p := range []frame.Provenance{a, b, c, d} {
		k := string(encodeLink(p))
		if q, dup := seen[k]; dup {
			t.Fatalf("%+v and %+v encode alike", p, q)
		}
		seen[k] = p
	}
}
