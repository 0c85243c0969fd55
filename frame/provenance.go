package frame

// ProvenanceMember names one optional member of a provenance link. The
// values are distinct bits, but each method takes exactly one member.
type ProvenanceMember uint8

// The optional members of a provenance link, in wire (and attestation
// encoding) order.
const (
	MemberURI    ProvenanceMember = 1 << iota // "uri", field URI
	MemberRange                               // "range", field Range
	MemberDigest                              // "digest", field Digest
	MemberMethod                              // "method", field Method
	MemberBy                                  // "by", field By
)

// String returns the member's wire name, or "" for a value that names no
// single member.
func (m ProvenanceMember) String() string {
	return memberName(m, "uri", "range", "digest", "method", "by")
}

// field returns the address of the string field that holds m, or nil when m
// names no single member.
func (p *Provenance) field(m ProvenanceMember) *string {
	return memberField(m, &p.URI, &p.Range, &p.Digest, &p.Method, &p.By)
}

// Has reports whether member m is present: its field is not empty, or the
// link marks it present-and-empty (decoded from "" or set with Set). It is
// false for a value that names no single member.
func (p Provenance) Has(m ProvenanceMember) bool { return hasMember(p.field(m), p.empty, m) }

// Set makes member m present with value v; v may be "", which the encodings
// then write as an explicit empty string. A value that names no single
// member is ignored.
func (p *Provenance) Set(m ProvenanceMember, v string) { setMember(p.field(m), &p.empty, m, v) }

// Clear makes member m absent: its field becomes "" and any
// present-and-empty mark is dropped. A value that names no single member is
// ignored.
func (p *Provenance) Clear(m ProvenanceMember) { clearMember(p.field(m), &p.empty, m) }
