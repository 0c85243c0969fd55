package frame

// FrameMember names one optional string member of a frame whose explicit
// empty string ("valid_from": "") is kept apart from absence, because a rule
// holds a present value to a grammar the empty string fails (rule F4). The
// values are distinct bits, but each method takes exactly one member.
type FrameMember uint8

// The frame members that remember being sent as "", in wire order.
const (
	MemberValidFrom  FrameMember = 1 << iota // "valid_from", field ValidFrom
	MemberValidTo                            // "valid_to", field ValidTo
	MemberRecordedAt                         // "recorded_at", field RecordedAt
)

// frameMembers lists every FrameMember in wire order.
var frameMembers = [...]FrameMember{MemberValidFrom, MemberValidTo, MemberRecordedAt}

// String returns the member's wire name, or "" for a value that names no
// single member.
func (m FrameMember) String() string {
	switch m {
	case MemberValidFrom:
		return "valid_from"
	case MemberValidTo:
		return "valid_to"
	case MemberRecordedAt:
		return "recorded_at"
	}
	return ""
}

// field returns the address of the string field that holds m, or nil when m
// names no single member.
func (f *Frame) field(m FrameMember) *string {
	switch m {
	case MemberValidFrom:
		return &f.ValidFrom
	case MemberValidTo:
		return &f.ValidTo
	case MemberRecordedAt:
		return &f.RecordedAt
	}
	return nil
}

// Has reports whether member m is present: its field is not empty, or the
// frame marks it present-and-empty (decoded from "" or set with Set). It is
// false for a value that names no single member.
func (f *Frame) Has(m FrameMember) bool {
	p := f.field(m)
	return p != nil && (*p != "" || f.empty&m != 0)
}

// Set makes member m present with value v; v may be "", which the encoding
// then writes as an explicit empty string and Validate holds to the member's
// rule. A value that names no single member is ignored.
func (f *Frame) Set(m FrameMember, v string) {
	p := f.field(m)
	if p == nil {
		return
	}
	*p = v
	if v == "" {
		f.empty |= m
	} else {
		f.empty &^= m
	}
}

// Clear makes member m absent: its field becomes "" and any
// present-and-empty mark is dropped. A value that names no single member is
// ignored.
func (f *Frame) Clear(m FrameMember) {
	if p := f.field(m); p != nil {
		*p = ""
		f.empty &^= m
	}
}

// RelationMember names one optional member of a relation whose explicit
// empty string ("display_name": "") is kept apart from absence, because rule
// G1 holds a present display name to being non-blank.
type RelationMember uint8

// The relation members that remember being sent as "".
const (
	MemberDisplayName RelationMember = 1 << iota // "display_name", field DisplayName
)

// String returns the member's wire name, or "" for a value that names no
// single member.
func (m RelationMember) String() string {
	if m == MemberDisplayName {
		return "display_name"
	}
	return ""
}

// field returns the address of the string field that holds m, or nil when m
// names no single member.
func (r *Relation) field(m RelationMember) *string {
	if m == MemberDisplayName {
		return &r.DisplayName
	}
	return nil
}

// Has reports whether member m is present: its field is not empty, or the
// relation marks it present-and-empty (decoded from "" or set with Set). It
// is false for a value that names no single member.
func (r Relation) Has(m RelationMember) bool {
	p := r.field(m)
	return p != nil && (*p != "" || r.empty&m != 0)
}

// Set makes member m present with value v; v may be "", which the encoding
// then writes as an explicit empty string and Validate reports as blank
// (rule G1). A value that names no single member is ignored.
func (r *Relation) Set(m RelationMember, v string) {
	p := r.field(m)
	if p == nil {
		return
	}
	*p = v
	if v == "" {
		r.empty |= m
	} else {
		r.empty &^= m
	}
}

// Clear makes member m absent: its field becomes "" and any
// present-and-empty mark is dropped. A value that names no single member is
// ignored.
func (r *Relation) Clear(m RelationMember) {
	if p := r.field(m); p != nil {
		*p = ""
		r.empty &^= m
	}
}
