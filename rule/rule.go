// Package rule names the Context Graph Protocol rules ctxkit checks and
// cites. Each constant is a rule's anchor as docs/protocol.md §2.7 lists it,
// with the rule in one line; a value of Rule travels in errors and reports
// (frame.RuleError, the HTTP API's rule member) and serialises as the bare
// anchor, e.g. "B3".
//
// Only the rules ctxkit's code names are constants here; docs/protocol.md
// describes the rest.
package rule

// Rule is a protocol rule's anchor (B3, F5, G1 ...) or Schema.
type Rule string

// Schema marks a structural requirement of the wire shapes that has no
// numbered rule: a blank goal, an unknown enumeration spelling.
const Schema Rule = "schema"

// Handshake and correlation (docs/protocol.md §2.6, §2.7).
const (
	// H1: the provider answers the handshake with an ack in the host's
	// version family.
	H1 Rule = "H1"
	// H2: the provider's name and version are not blank.
	H2 Rule = "H2"
	// H4: a provider that declares correlation echoes the query id
	// unchanged.
	H4 Rule = "H4"
)

// Consent and egress (docs/protocol.md §1.3, §3).
const (
	// C5: an off-machine scope never comes with egress false, and vendor
	// scopes are namespaced.
	C5 Rule = "C5"
)

// Queries and embeddings (docs/protocol.md §1.4).
const (
	// Q1: when a query names kinds, only frames of those kinds come back.
	Q1 Rule = "Q1"
	// E1: a query carries an embedding only when the fingerprints match
	// exactly; a vector of the wrong length is bad_request.
	E1 Rule = "E1"
)

// Frames (docs/protocol.md §1.6, §2.3–§2.5).
const (
	// F1: a score lies in [0, 1].
	F1 Rule = "F1"
	// F2: the title is not blank.
	F2 Rule = "F2"
	// F3: the citation label is not blank.
	F3 Rule = "F3"
	// F4: timestamps follow the grammar of docs/protocol.md §2.4.
	F4 Rule = "F4"
	// F5: a file provenance link carries a well-formed digest.
	F5 Rule = "F5"
	// F17: a file link's line range follows docs/protocol.md §2.5.
	F17 Rule = "F17"
	// D1: a content digest is "sha256:" and 64 lowercase hex digits.
	D1 Rule = "D1"
)

// Representations (docs/protocol.md §1.6).
const (
	// P1: a full frame carries content and none of content_ref, transform or
	// canonical_content_hash.
	P1 Rule = "P1"
	// P2: a compact frame carries content, content_digest,
	// canonical_content_hash, transform and content_ref.
	P2 Rule = "P2"
	// P3: a reference frame carries content_ref and canonical_content_hash,
	// and neither content (not even "") nor content_digest nor transform.
	P3 Rule = "P3"
	// P4: token_cost counts the inline bytes, so a reference frame costs 0.
	P4 Rule = "P4"
)

// Budgets (docs/protocol.md §2.1).
const (
	// B1: the frames' token costs sum to at most max_tokens.
	B1 Rule = "B1"
	// B2: the host drops the whole reply of a provider breaking B1 and says
	// so.
	B2 Rule = "B2"
	// B3: a frame's token_cost is exactly ceil(content bytes / 4).
	B3 Rule = "B3"
	// B4: a reply holds at most max_frames frames.
	B4 Rule = "B4"
)

// Relations and anchors (docs/protocol.md §1.6).
const (
	// G1: every relation has a display_name that is present and not blank.
	G1 Rule = "G1"
	// G2: a relation's target_uri is not blank.
	G2 Rule = "G2"
)

// Verification, robustness, attribution and vocabularies (docs/protocol.md
// §1.7, §1.3, §3).
const (
	// V4: only a stale verdict may name a replacement digest.
	V4 Rule = "V4"
	// U3: a name holding ":" is a vendor namespace.
	U3 Rule = "U3"
)
