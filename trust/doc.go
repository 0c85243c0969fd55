// Package trust implements CGP provenance attestation (docs/protocol.md
// §4.4–§4.5): the frame commitment over a provider name, frame id, optional
// content digest and provenance hash chain; the RFC 6962 Merkle result root
// with inclusion proofs; strict Ed25519 verification of attestation records;
// an operator-filled Store of trusted keys persisted atomically; and the
// State a host records per frame, collected in a Ledger.
//
// Attestation describes, it never decides: a State annotates a frame and
// nothing in this package removes or reorders frames.
//
// The package does no I/O except LoadStore and Store.Save, which read and
// atomically replace the operator's store file.
package trust
