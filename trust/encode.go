package trust

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
)

// Domain-separation tags of the attestation construction (docs/protocol.md
// §4.4). They are part of the protocol: another implementation must hash
// exactly these bytes to compute the same commitments.
const (
	tagGenesis     = "contextgraph/attest/1/genesis"
	tagLink        = "contextgraph/attest/1/link"
	tagFrame       = "contextgraph/attest/1/frame"
	tagMerkleEmpty = "contextgraph/attest/1/merkle-empty"
)

// opt is an optional string: absent (ok false) encodes differently from "".
type opt struct {
	s  string
	ok bool
}

// linkFields are the six members of a provenance link in their normative
// encoding order.
type linkFields struct {
	typ                          string
	uri, rng, digest, method, by opt
}

// appendStr appends u32be(len(s)) ‖ s. A string longer than 2³²−1 bytes
// cannot be encoded injectively; its length prefix saturates, and such a
// value can never reach here from a bounded wire line anyway.
func appendStr(b []byte, s string) []byte {
	n := uint64(len(s))
	if n > math.MaxUint32 {
		n = math.MaxUint32
	}
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	return append(b, s...)
}

// appendOpt appends 0x00 for an absent value, else 0x01 ‖ appendStr.
func appendOpt(b []byte, o opt) []byte {
	if !o.ok {
		return append(b, 0)
	}
	return appendStr(append(b, 1), o.s)
}

// appendLink appends the canonical encoding of one provenance link.
func appendLink(b []byte, l linkFields) []byte {
	b = appendStr(b, l.typ)
	b = appendOpt(b, l.uri)
	b = appendOpt(b, l.rng)
	b = appendOpt(b, l.digest)
	b = appendOpt(b, l.method)
	return appendOpt(b, l.by)
}

// genesis is SHA-256 of the genesis tag: the head of an empty chain.
func genesis() digest { return sha256.Sum256([]byte(tagGenesis)) }

// chainer folds links into a provenance hash chain, reusing one hash state
// and one scratch buffer.
type chainer struct {
	h    hash.Hash
	buf  []byte
	head digest
}

func newChainer() *chainer { return &chainer{h: sha256.New(), head: genesis()} }

func (c *chainer) reset() { c.head = genesis() }

// add folds one link: head = SHA256(tagLink ‖ head ‖ encode(link)).
func (c *chainer) add(l linkFields) {
	c.buf = appendLink(append(append(c.buf[:0], tagLink...), c.head[:]...), l)
	c.h.Reset()
	c.h.Write(c.buf)
	c.h.Sum(c.head[:0])
}

// frameCommitment returns SHA256(tagFrame ‖ enc(provider) ‖ enc(frameID) ‖
// enc_opt(contentDigest) ‖ head).
func (c *chainer) frameCommitment(provider, frameID string, contentDigest opt, head digest) digest {
	c.buf = append(c.buf[:0], tagFrame...)
	c.buf = appendStr(c.buf, provider)
	c.buf = appendStr(c.buf, frameID)
	c.buf = appendOpt(c.buf, contentDigest)
	c.buf = append(c.buf, head[:]...)
	c.h.Reset()
	c.h.Write(c.buf)
	var d digest
	c.h.Sum(d[:0])
	return d
}
