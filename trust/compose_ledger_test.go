package trust_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/trust"
	"github.com/ctxkit/ctxkit/wire"
)

// ledgerStates gives the composer a ledger's states, as a host does.
type ledgerStates struct{ *trust.Ledger }

func (l ledgerStates) Attestation(id frame.ID) compose.Attestation { return l.State(id) }

// TestLedgerAnnotatesOnly is the composer-side acceptance test of
// attestation: for random offer sets, ForPrompt makes the same selection,
// placement, prompt bytes and citations with an empty ledger as with a
// ledger full of mixed states (real verdicts from signed, tampered, forged
// and unknown-key results, plus arbitrary states), and the audit's attested
// view lists exactly the entries whose state is Attested.
func TestLedgerAnnotatesOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 2026))
	signers, store := ledgerSigners(t, []string{"alpha", "beta", "gamma", "delta"})
	sawAttested, sawFailure := false, false
	for iter := 0; iter < 100; iter++ {
		offers, ledger := randomLedgerOffers(rng, iter, signers, store)
		budget := rng.IntN(600)
		plain := compose.ForPrompt(offers, budget, nil)
		empty := compose.ForPrompt(offers, budget, &compose.Options{Attestations: ledgerStates{trust.NewLedger()}})
		mixed := compose.ForPrompt(offers, budget, &compose.Options{Attestations: ledgerStates{ledger}})
		for name, r := range map[string]*compose.Result{"empty": empty, "mixed": mixed} {
			sameComposition(t, iter, name, r, plain, len(offers))
		}
		for i, e := range empty.Audit.Entries {
			if e.Attestation != trust.NewLedger().State(e.Frame) || plain.Audit.Entries[i].Attestation != nil {
				t.Fatalf("iter %d: empty ledger entry %d is %v", iter, i, e.Attestation)
			}
		}
		if len(empty.Audit.Attested()) != 0 {
			t.Fatalf("iter %d: attested entries without a ledger", iter)
		}
		var want []compose.Entry
		for _, e := range mixed.Audit.Entries {
			if e.Attestation != ledger.State(e.Frame) {
				t.Fatalf("iter %d: entry %v carries %v, ledger has %v", iter, e.Frame, e.Attestation, ledger.State(e.Frame))
			}
			if ledger.State(e.Frame).IsAttested() {
				want = append(want, e)
				sawAttested = true
			} else if ledger.State(e.Frame).WasOffered() {
				sawFailure = true
			}
		}
		if got := mixed.Audit.Attested(); !reflect.DeepEqual(got, want) {
			t.Fatalf("iter %d: attested view %v, want %v", iter, got, want)
		}
		// The JSON encodings differ only in the attestation members.
		a, _ := json.Marshal(plain)
		b, _ := json.Marshal(mixed)
		if bytes.Equal(a, b) != (ledgerIsAllNotChecked(mixed)) {
			t.Fatalf("iter %d: JSON equality does not track the ledger", iter)
		}
	}
	if !sawAttested || !sawFailure {
		t.Fatalf("generator too weak: attested %v, failures %v", sawAttested, sawFailure)
	}
}

// ledgerSigners gives each provider a signer; every provider's key but the
// last one's is in the store.
func ledgerSigners(t *testing.T, providers []string) ([]*trust.Signer, *trust.Store) {
	t.Helper()
	store := trust.NewStore()
	signers := make([]*trust.Signer, len(providers))
	for i, p := range providers {
		s, err := trust.NewSigner(bytes.Repeat([]byte{byte(i + 1)}, 32), "key-"+p, p+" inc")
		if err != nil {
			t.Fatal(err)
		}
		signers[i] = s
		if i < len(providers)-1 { // the last provider's key is never trusted
			if err := store.Add(p, s.KeyID, s.PublicKey()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return signers, store
}

// arbitraryStates are states the ledger is given directly, beside the
// verdicts of real results.
var arbitraryStates = []trust.State{
	{}, trust.NewUnattested(), trust.NewAttested("k", "a", true), trust.NewAttested("k", "", false),
	trust.NewNoTrustedKey("k"), trust.NewUnknownAlgorithm("rsa"), trust.NewInvalid(trust.BadSignature),
	trust.NewInvalid(trust.CommitmentMismatch),
}

// randomLedgerOffers draws one offer set and the ledger of its results:
// per provider up to seven frames, some sharing digests, each signed,
// unsigned, forged or of an unknown algorithm, some results changed after
// signing, and some states set arbitrarily.
func randomLedgerOffers(rng *rand.Rand, iter int, signers []*trust.Signer, store *trust.Store) ([]compose.Offer, *trust.Ledger) {
	var offers []compose.Offer
	ledger := trust.NewLedger()
	for _, signer := range signers {
		p := strings.TrimPrefix(signer.KeyID, "key-")
		res := &wire.Result{Frames: randomLedgerFrames(rng, iter, p)}
		for i := range res.Frames {
			att := signer.SignFrame(p, &res.Frames[i], "2026-11-29T12:00:00Z")
			switch rng.IntN(5) {
			case 0: // no attestation
				continue
			case 1: // forged signature
				b := []byte(att.Signature)
				b[100] ^= 1
				att.Signature = string(b)
			case 2: // unknown algorithm
				att.Algorithm = "ed448"
			}
			res.FrameAttestations = append(res.FrameAttestations, wire.FrameAttestation{Frame: res.Frames[i].Identity(p), Attestation: &att})
		}
		if rng.IntN(3) == 0 && len(res.Frames) > 0 { // provider changed a frame after signing
			res.Frames[0].Provenance = nil
		}
		ledger.AddResult(store, p, p, res)
		for i := range res.Frames {
			if rng.IntN(6) == 0 { // and some arbitrary states
				ledger.Set(res.Frames[i].Identity(p), arbitraryStates[rng.IntN(len(arbitraryStates))])
			}
			offers = append(offers, compose.Offer{Provider: p, Frame: &res.Frames[i]})
		}
	}
	return offers, ledger
}

// randomLedgerFrames draws up to seven frames of provider p, three in four
// with a digest of a prefix shared with other frames (so some dedup).
func randomLedgerFrames(rng *rand.Rand, iter int, p string) []frame.Frame {
	frames := make([]frame.Frame, rng.IntN(8))
	for i := range frames {
		content := fmt.Sprintf("evidence %d/%d from %s %s", iter, rng.IntN(6), p, bytes.Repeat([]byte("z"), rng.IntN(200)))
		f := frame.Frame{
			ID: fmt.Sprintf("%s-%d", p, i), Kind: frame.KindSnippet, Title: "t", Content: content,
			Score: float32(rng.IntN(101)) / 100, CitationLabel: fmt.Sprintf("%s %d", p, i),
			Provenance: []frame.Provenance{{Type: "file", URI: fmt.Sprintf("file:///%s/%d", p, rng.IntN(4))}},
		}
		if rng.IntN(4) > 0 {
			f.ContentDigest = fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(content[:14]))) // shared digests ⇒ dedup
		}
		frames[i] = f
	}
	return frames
}

// sameComposition fails t unless r, composed with a ledger, made the same
// prompt, citations, totals and per-entry decisions as plain.
func sameComposition(t *testing.T, iter int, name string, r, plain *compose.Result, offers int) {
	t.Helper()
	if r.Prompt != plain.Prompt {
		t.Fatalf("iter %d: %s ledger changed the prompt", iter, name)
	}
	if !reflect.DeepEqual(r.Citations, plain.Citations) {
		t.Fatalf("iter %d: %s ledger changed the citations/placement", iter, name)
	}
	if len(r.Audit.Entries) != offers || r.Audit.TokensUsed != plain.Audit.TokensUsed {
		t.Fatalf("iter %d: %s ledger changed the audit totals", iter, name)
	}
	for i, e := range r.Audit.Entries {
		p := plain.Audit.Entries[i]
		if e.Frame != p.Frame || e.Disposition != p.Disposition || e.Reason != p.Reason || e.Verification != p.Verification {
			t.Fatalf("iter %d: %s ledger changed entry %d: %+v vs %+v", iter, name, i, e, p)
		}
	}
}

func ledgerIsAllNotChecked(r *compose.Result) bool {
	for _, e := range r.Audit.Entries {
		if e.Attestation != nil && e.Attestation.String() != "not_checked" {
			return false
		}
	}
	return true
}

// A frame nobody checked reads the same in the audit whether the composer
// had no attestations or a ledger that never saw the frame.
func TestNotCheckedEncodesAsLedgerZero(t *testing.T) {
	f := frame.Frame{ID: "a", Kind: frame.KindSnippet, Title: "t", Content: "c", Score: 0.5}
	offers := []compose.Offer{{Provider: "p", Frame: &f}}
	plain, err := json.Marshal(compose.ForPrompt(offers, 100, nil).Audit)
	if err != nil {
		t.Fatal(err)
	}
	with, err := json.Marshal(compose.ForPrompt(offers, 100, &compose.Options{Attestations: ledgerStates{trust.NewLedger()}}).Audit)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, with) {
		t.Fatalf("no attestations:\n%s\nempty ledger:\n%s", plain, with)
	}
}
