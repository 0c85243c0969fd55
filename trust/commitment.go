package trust

import (
	"sort"

	"github.com/ctxkit/ctxkit/frame"
)

// linkOpt is member m of link p, present when p.Has(m): a member decoded
// from "" or set to "" with Provenance.Set encodes as 0x01 00000000, as the
// reference encodes Some("").
func linkOpt(p *frame.Provenance, m frame.ProvenanceMember, s string) opt {
	return opt{s: s, ok: p.Has(m)}
}

func fieldsOf(p *frame.Provenance) linkFields {
	return linkFields{
		typ:    p.Type,
		uri:    linkOpt(p, frame.MemberURI, p.URI),
		rng:    linkOpt(p, frame.MemberRange, p.Range),
		digest: linkOpt(p, frame.MemberDigest, p.Digest),
		method: linkOpt(p, frame.MemberMethod, p.Method),
		by:     linkOpt(p, frame.MemberBy, p.By),
	}
}

// encodeLink returns the canonical encoding of one provenance link
// (docs/protocol.md §4.4): enc_str(type) ‖ enc_opt(uri) ‖ enc_opt(range) ‖
// enc_opt(digest) ‖ enc_opt(method) ‖ enc_opt(by), where enc_str(s) is the
// 4-byte big-endian byte length then the UTF-8 bytes, and enc_opt writes
// 0x00 for absent, else 0x01 then enc_str. A member is present when
// p.Has reports it, so a present-and-empty member encodes as 0x01 00000000.
func encodeLink(p frame.Provenance) []byte { return appendLink(nil, fieldsOf(&p)) }

// chainHead returns the head of the provenance hash chain: it starts at
// SHA256("contextgraph/attest/1/genesis") and folds each link, source
// first (the slice order), as SHA256("contextgraph/attest/1/link" ‖ head ‖
// encodeLink(link)). No link can be added, removed, reordered or edited
// without changing the head.
func chainHead(links []frame.Provenance) digest {
	c := newChainer()
	return c.chain(links)
}

func (c *chainer) chain(links []frame.Provenance) digest {
	c.reset()
	for i := range links {
		c.add(fieldsOf(&links[i]))
	}
	return c.head
}

// frameCommitment returns the commitment a frame attestation signs:
// SHA256("contextgraph/attest/1/frame" ‖ enc_str(providerName) ‖
// enc_str(f.ID) ‖ enc_opt(f.ContentDigest) ‖ ChainHead(f.Provenance)).
// providerName is the provider's handshake-declared name (ADR 0023), which
// may differ from the host's local id for it.
func frameCommitment(providerName string, f *frame.Frame) digest {
	c := newChainer()
	return c.commit(providerName, f)
}

func (c *chainer) commit(providerName string, f *frame.Frame) digest {
	head := c.chain(f.Provenance)
	// A content_digest sent as "" is present: 0x01 00000000, as the
	// reference encodes Some("").
	digest := opt{s: f.ContentDigest, ok: f.Has(frame.MemberContentDigest)}
	return c.frameCommitment(providerName, f.ID, digest, head)
}

// resultCommitments returns the identities (under providerName) and
// commitments of frames, sorted together in canonical FrameID order — the
// leaf order of the result root.
func resultCommitments(providerName string, frames []frame.Frame) ([]frame.ID, []digest) {
	idx := make([]int, len(frames))
	ids := make([]frame.ID, len(frames))
	for i := range frames {
		idx[i] = i
		ids[i] = frames[i].Identity(providerName)
	}
	sort.SliceStable(idx, func(a, b int) bool { return ids[idx[a]].Compare(ids[idx[b]]) < 0 })
	outIDs := make([]frame.ID, len(frames))
	out := make([]digest, len(frames))
	c := newChainer()
	for k, i := range idx {
		outIDs[k] = ids[i]
		out[k] = c.commit(providerName, &frames[i])
	}
	return outIDs, out
}

// resultRoot returns the Merkle root a result attestation signs: merkleRoot
// over the frames' commitments in canonical FrameID order.
func resultRoot(providerName string, frames []frame.Frame) digest {
	_, cs := resultCommitments(providerName, frames)
	return merkleRoot(cs)
}
