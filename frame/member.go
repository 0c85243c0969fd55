package frame

import "math/bits"

// The member types below (FrameMember, relationMember, QueryMember,
// contentRefMember, and ProvenanceMember in provenance.go) share one
// mechanism: each value type keeps a bit set of the members present with
// an empty value, and a mark matters only while its field is "". The
// generic helpers are that mechanism; field is nil for a member value that
// names no single member, which every method then ignores.

// memberBits is the underlying type of a member bit set.
type memberBits interface{ ~uint8 | ~uint16 }

// hasMember reports whether the member held in field is present: not
// empty, or marked present-and-empty in marks.
func hasMember[M memberBits](field *string, marks, m M) bool {
	return field != nil && (*field != "" || marks&m != 0)
}

// setMember stores v in field and marks the member present-and-empty when
// v is "" (and unmarks it otherwise).
func setMember[M memberBits](field *string, marks *M, m M, v string) {
	if field == nil {
		return
	}
	*field = v
	if v == "" {
		*marks |= m
	} else {
		*marks &^= m
	}
}

// clearMember makes the member absent: field "" and no mark.
func clearMember[M memberBits](field *string, marks *M, m M) {
	if field != nil {
		*field = ""
		*marks &^= m
	}
}

// FrameMember names one optional string member of a frame whose explicit
// empty string ("valid_from": "") is kept apart from absence, because a rule
// holds a present value to something the empty string fails: the
// timestamps to F4's grammar, content_digest and canonical_content_hash to
// D1's, and the enumerations (representation, content_fidelity,
// minimum_content_fidelity, inline_content_requirement) to their closed
// sets of spellings. Content is one too, the other way round: P1 and P2
// require it carried and P3 forbids it, "" included, so "content": "" is
// carried and no content member is not. The values are distinct bits, but
// each method takes exactly one member.
type FrameMember uint16

// The frame members that remember being sent as "".
const (
	MemberValidFrom                FrameMember = 1 << iota // "valid_from", field ValidFrom
	memberValidTo                                          // "valid_to", field ValidTo
	memberRecordedAt                                       // "recorded_at", field RecordedAt
	MemberContentDigest                                    // "content_digest", field ContentDigest
	memberCanonicalContentHash                             // "canonical_content_hash", field CanonicalContentHash
	memberRepresentation                                   // "representation", field Representation
	memberContentFidelity                                  // "content_fidelity", field ContentFidelity
	memberMinimumContentFidelity                           // "minimum_content_fidelity", field MinimumContentFidelity
	memberInlineContentRequirement                         // "inline_content_requirement", field InlineContentRequirement
	memberContent                                          // "content", field Content
)

// frameMembers lists every FrameMember; frameTimestamps the three held to
// F4, in wire order.
var (
	frameMembers = [...]FrameMember{MemberValidFrom, memberValidTo, memberRecordedAt, MemberContentDigest,
		memberCanonicalContentHash, memberRepresentation, memberContentFidelity, memberMinimumContentFidelity,
		memberInlineContentRequirement, memberContent}
	frameTimestamps = [...]FrameMember{MemberValidFrom, memberValidTo, memberRecordedAt}
)

// String returns the member's wire name, or "" for a value that names no
// single member.
func (m FrameMember) String() string {
	return memberName(m, "valid_from", "valid_to", "recorded_at", "content_digest", "canonical_content_hash",
		"representation", "content_fidelity", "minimum_content_fidelity", "inline_content_requirement", "content")
}

// field returns the address of the string field that holds m, or nil when m
// names no single member.
func (f *Frame) field(m FrameMember) *string {
	return memberField(m, &f.ValidFrom, &f.ValidTo, &f.RecordedAt, &f.ContentDigest, &f.CanonicalContentHash,
		(*string)(&f.Representation), (*string)(&f.ContentFidelity), (*string)(&f.MinimumContentFidelity),
		(*string)(&f.InlineContentRequirement), &f.Content)
}

// Has reports whether member m is present: its field is not empty, or the
// frame marks it present-and-empty (decoded from "" or set with Set). It is
// false for a value that names no single member.
func (f *Frame) Has(m FrameMember) bool { return hasMember(f.field(m), f.empty, m) }

// Set makes member m present with value v; v may be "", which the encoding
// then writes as an explicit empty string and Validate holds to the member's
// rule. A value that names no single member is ignored.
func (f *Frame) Set(m FrameMember, v string) { setMember(f.field(m), &f.empty, m, v) }

// Clear makes member m absent: its field becomes "" and any
// present-and-empty mark is dropped. A value that names no single member is
// ignored.
func (f *Frame) Clear(m FrameMember) { clearMember(f.field(m), &f.empty, m) }

// relationMember names one optional member of a relation whose explicit
// empty string ("display_name": "") is kept apart from absence, because rule
// G1 holds a present display name to being non-blank.
type relationMember uint8

// The relation members that remember being sent as "".
const (
	memberDisplayName relationMember = 1 << iota // "display_name", field DisplayName
)

// String returns the member's wire name, or "" for a value that names no
// single member.
func (m relationMember) String() string { return memberName(m, "display_name") }

// field returns the address of the string field that holds m, or nil when m
// names no single member.
func (r *Relation) field(m relationMember) *string { return memberField(m, &r.DisplayName) }

// has reports whether member m is present: its field is not empty, or the
// relation marks it present-and-empty (decoded from "" or set with Set). It
// is false for a value that names no single member.
func (r Relation) has(m relationMember) bool { return hasMember(r.field(m), r.empty, m) }

// set makes member m present with value v; v may be "", which the encoding
// then writes as an explicit empty string and Validate reports as blank
// (rule G1). A value that names no single member is ignored.
func (r *Relation) set(m relationMember, v string) { setMember(r.field(m), &r.empty, m, v) }

// clear makes member m absent: its field becomes "" and any
// present-and-empty mark is dropped. A value that names no single member is
// ignored.
func (r *Relation) clear(m relationMember) { clearMember(r.field(m), &r.empty, m) }

// QueryMember names one optional member of a query whose explicit empty
// string ("as_of": "") is kept apart from absence: an absent as_of means
// now, while one sent as "" is a pin that is not a timestamp (rule F4).
// Query's Has, Set and Clear work as Frame's do.
type QueryMember uint8

// MemberAsOf is a query's "as_of", field AsOf.
const MemberAsOf QueryMember = 1

// String returns "as_of" for MemberAsOf and "" for any other value.
func (m QueryMember) String() string { return memberName(m, "as_of") }

func (q *Query) field(m QueryMember) *string { return memberField(m, &q.AsOf) }

// Has reports whether member m is present, "" included (see QueryMember).
func (q *Query) Has(m QueryMember) bool { return hasMember(q.field(m), q.empty, m) }

// Set makes member m present with value v, "" included.
func (q *Query) Set(m QueryMember, v string) { setMember(q.field(m), &q.empty, m, v) }

// clear makes member m absent.
func (q *Query) clear(m QueryMember) { clearMember(q.field(m), &q.empty, m) }

// contentRefMember names one optional member of a content reference whose
// explicit empty string ("expires_at": "") is kept apart from absence: an
// absent expires_at states no expiry, while one sent as "" is not a
// timestamp (rule F4). ContentRef's has, set and clear work as Frame's
// Has, Set and Clear do.
type contentRefMember uint8

// memberExpiresAt is a content reference's "expires_at", field ExpiresAt.
const memberExpiresAt contentRefMember = 1

// String returns "expires_at" for memberExpiresAt and "" for any other value.
func (m contentRefMember) String() string { return memberName(m, "expires_at") }

func (c *ContentRef) field(m contentRefMember) *string {
	return memberField(m, &c.ExpiresAt)
}

// has reports whether member m is present, "" included (see contentRefMember).
func (c *ContentRef) has(m contentRefMember) bool { return hasMember(c.field(m), c.empty, m) }

// set makes member m present with value v, "" included.
func (c *ContentRef) set(m contentRefMember, v string) { setMember(c.field(m), &c.empty, m, v) }

// clear makes member m absent.
func (c *ContentRef) clear(m contentRefMember) { clearMember(c.field(m), &c.empty, m) }

// memberName and memberField serve every member type's String and field:
// given the type's names, or the addresses of its fields, in bit order,
// they return the one m names, or "" and nil when m is not a single bit of
// the type.
func memberName[M memberBits](m M, names ...string) string {
	if k, ok := memberIndex(m, len(names)); ok {
		return names[k]
	}
	return ""
}

func memberField[M memberBits](m M, fields ...*string) *string {
	if k, ok := memberIndex(m, len(fields)); ok {
		return fields[k]
	}
	return nil
}

// memberIndex returns k when m is the single bit 1<<k and k < n.
func memberIndex[M memberBits](m M, n int) (int, bool) {
	k := bits.TrailingZeros16(uint16(m))
	return k, m != 0 && m&(m-1) == 0 && k < n
}
