package trust

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// Signer holds an Ed25519 private key and the metadata a provider puts on
// its attestations. It is for providers and tests that sign in-process; a
// provider whose key lives in an HSM computes the frame or result
// commitment docs/protocol.md defines itself and signs the 32 bytes there.
type Signer struct {
	priv ed25519.PrivateKey
	pub  PublicKey
	// KeyID is written into every attestation; it must match the key id the
	// verifying operator trusted.
	KeyID string
	// attester is the unsigned accountable-party label (may be empty).
	AttesterID string
}

// errSeedLength reports a seed that is not 32 bytes.
var errSeedLength = errors.New("ed25519 seed must be 32 bytes")

// NewSigner returns a signer for the 32-byte seed. It fails when the seed
// has the wrong length or (with negligible probability) derives a key the
// strict checks refuse.
func NewSigner(seed []byte, keyID, attesterID string) (*Signer, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("trust: new signer: %w (got %d)", errSeedLength, len(seed))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub, err := newPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, fmt.Errorf("trust: new signer: %w", err)
	}
	return &Signer{priv: priv, pub: pub, KeyID: keyID, AttesterID: attesterID}, nil
}

// GenerateSigner draws a fresh 32-byte seed from random (crypto/rand.Reader
// in production) and returns its signer and the seed.
func GenerateSigner(random io.Reader, keyID, attesterID string) (*Signer, []byte, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(random, seed); err != nil {
		return nil, nil, fmt.Errorf("trust: generate key: %w", err)
	}
	s, err := NewSigner(seed, keyID, attesterID)
	if err != nil {
		return nil, nil, err
	}
	return s, seed, nil
}

// PublicKey returns the verifying key.
func (s *Signer) PublicKey() PublicKey { return s.pub }

// signCommitment signs the 32 bytes of c and returns the attestation record
// with the given issue time (an F4 timestamp; the signer has no clock).
func (s *Signer) signCommitment(c digest, issuedAt string) wire.Attestation {
	sig := ed25519.Sign(s.priv, c[:])
	return wire.Attestation{
		SignedCommitment: c.String(),
		KeyID:            s.KeyID,
		Algorithm:        algorithmEd25519,
		AttesterID:       s.AttesterID,
		Signature:        hex.EncodeToString(sig),
		IssuedAt:         issuedAt,
	}
}

// SignFrame signs f's commitment under providerName (the name the provider
// declares in its handshake).
func (s *Signer) SignFrame(providerName string, f *frame.Frame, issuedAt string) wire.Attestation {
	return s.signCommitment(frameCommitment(providerName, f), issuedAt)
}

// signResult signs the result root of frames under providerName: one
// signature for the whole answer, to be paired with per-frame inclusion
// proofs (prove over resultCommitments).
func (s *Signer) signResult(providerName string, frames []frame.Frame, issuedAt string) wire.Attestation {
	return s.signCommitment(resultRoot(providerName, frames), issuedAt)
}
