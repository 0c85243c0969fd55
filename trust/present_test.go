package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// presentEmptyFrame is a frame as a reference provider sends it: its file
// link carries "uri" and "method" as explicit empty strings.
const presentEmptyFrame = `{"id":"fid","kind":"doc","title":"t","content":"c","score":0.5,"token_cost":1,` +
	`"provenance":[{"type":"file","uri":"","digest":"sha256:00","method":""}],"citation_label":"c"}`

// TestPresentEmptyMemberByHand spells out, byte by byte and independently
// of the encoder, the reference encoding of a link with present-but-empty
// members (enc_opt(Some("")) = 01 00000000) and the commitment of a frame
// decoded with it.
func TestPresentEmptyMemberByHand(t *testing.T) {
	var f frame.Frame
	if err := json.Unmarshal([]byte(presentEmptyFrame), &f); err != nil {
		t.Fatal(err)
	}
	wantLink := []byte{0, 0, 0, 4, 'f', 'i', 'l', 'e',
		1, 0, 0, 0, 0, // uri: Some("")
		0,                                                          // range: None
		1, 0, 0, 0, 9, 's', 'h', 'a', '2', '5', '6', ':', '0', '0', // digest
		1, 0, 0, 0, 0, // method: Some("")
		0, // by: None
	}
	if got := encodeLink(f.Provenance[0]); !bytes.Equal(got, wantLink) {
		t.Fatalf("link encoding %x, want %x", got, wantLink)
	}
	g := sha256.Sum256([]byte("contextgraph/attest/1/genesis"))
	h := sha256.Sum256(append(append([]byte("contextgraph/attest/1/link"), g[:]...), wantLink...))
	if chainHead(f.Provenance) != digest(h) {
		t.Fatal("chain head")
	}
	pre := []byte("contextgraph/attest/1/frame")
	pre = append(pre, 0, 0, 0, 2, 'p', '1', 0, 0, 0, 3, 'f', 'i', 'd', 0)
	pre = append(pre, h[:]...)
	want := digest(sha256.Sum256(pre))
	if got := frameCommitment("p1", &f); got != want {
		t.Fatalf("commitment %v, want %v", got, want)
	}

	// The same link with the empty members absent encodes them as 00 and
	// commits differently.
	absent := f
	absent.Provenance = []frame.Provenance{{Type: "file", Digest: "sha256:00"}}
	wantAbsent := []byte{0, 0, 0, 4, 'f', 'i', 'l', 'e', 0, 0, 1, 0, 0, 0, 9, 's', 'h', 'a', '2', '5', '6', ':', '0', '0', 0, 0}
	if got := encodeLink(absent.Provenance[0]); !bytes.Equal(got, wantAbsent) {
		t.Fatalf("absent-member link encoding %x, want %x", got, wantAbsent)
	}
	if frameCommitment("p1", &absent) == want {
		t.Fatal("present-empty and absent members commit alike")
	}
	// A link built in Go with Set commits like the decoded one.
	built := frame.Provenance{Type: "file", Digest: "sha256:00"}
	built.Set(frame.MemberURI, "")
	built.Set(frame.MemberMethod, "")
	absent.Provenance = []frame.Provenance{built}
	if frameCommitment("p1", &absent) != want {
		t.Fatal("a link built with Set commits unlike the decoded one")
	}
}

// TestPresentEmptyMemberSignatureVerifies: a frame a reference provider
// signed over the reference commitment (present-empty members included)
// reads as attested when decoded from the wire, and still does after this
// side re-encodes and a peer decodes it again; dropping the empty member
// is tampering.
func TestPresentEmptyMemberSignatureVerifies(t *testing.T) {
	s := testSigner(t, 1)
	st := trustedStore(t, "prov", s)

	// The reference commitment, computed by hand: the link encoding with
	// 01 00000000 for each present-empty member.
	link := []byte{0, 0, 0, 4, 'f', 'i', 'l', 'e', 1, 0, 0, 0, 0, 0,
		1, 0, 0, 0, 9, 's', 'h', 'a', '2', '5', '6', ':', '0', '0', 1, 0, 0, 0, 0, 0}
	g := sha256.Sum256([]byte(tagGenesis))
	h := sha256.Sum256(append(append([]byte(tagLink), g[:]...), link...))
	pre := append([]byte(tagFrame), 0, 0, 0, 4, 'p', 'r', 'o', 'v', 0, 0, 0, 3, 'f', 'i', 'd', 0)
	att := s.signCommitment(digest(sha256.Sum256(append(pre, h[:]...))), issued)

	var f frame.Frame
	if err := json.Unmarshal([]byte(presentEmptyFrame), &f); err != nil {
		t.Fatal(err)
	}
	want := NewAttested(s.KeyID, s.AttesterID, false)
	if got := Check(st, "prov", &f, &att); got != want {
		t.Fatalf("decoded frame: %#v, want %#v", got, want)
	}
	enc, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(enc) != presentEmptyFrame {
		t.Fatalf("re-encoded frame differs:\n%s\n%s", enc, presentEmptyFrame)
	}
	var relayed frame.Frame
	if err := json.Unmarshal(enc, &relayed); err != nil {
		t.Fatal(err)
	}
	if got := Check(st, "prov", &relayed, &att); got != want {
		t.Fatalf("relayed frame: %#v, want %#v", got, want)
	}
	if f.Provenance[0].Clear(frame.MemberURI); Check(st, "prov", &f, &att) != NewInvalid(CommitmentMismatch) {
		t.Fatal("dropping the present-empty uri still verifies")
	}
}
