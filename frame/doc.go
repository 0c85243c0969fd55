// Package frame is the Context Graph Protocol (CGP) data model: the context
// frame a provider returns, its identity and canonical order, the query a host
// sends, what a provider declares about itself, the canonical budget-token
// count, and validation of every protocol rule that a single value can break.
//
// Each type's JSON encoding is the exact CGP wire encoding: members appear in
// protocol order, absent optional members are omitted, f32 numbers are written
// with their shortest digits (an integral value keeps ".0"), and nothing is
// HTML-escaped. Decoding ignores unknown members and accepts null for any
// optional member; a missing required member is a *MissingMemberError.
//
// An optional string member that is absent and one that is present but empty
// are mostly the same value here: the empty string. The exceptions are the
// members a rule or a signature treats differently when present: a
// provenance link's members (see Provenance.Has), the timestamps (a frame's
// valid_from, valid_to and recorded_at, see Frame.Has; a content
// reference's expires_at, ContentRef.Has; a query's as_of, Query.Has; all
// rule F4), a frame's content_digest and canonical_content_hash
// (Frame.Has, rule D1) and its enumerations (Frame.Has, which must name a
// value), and a relation's display_name (Relation.Has, rule G1). Decoding marks such a member sent as "" present, encoding writes it
// back, and Set marks one in Go. Member names are matched as
// encoding/json matches them, which also accepts a differently-cased spelling
// ("Title" for "title"); the reference serializer never emits one.
//
// Validation (Frame.Validate and friends) reports every violation at once,
// each a *RuleError naming the protocol rule it breaks (F1, B3, P2 ...).
//
// The package does no I/O.
package frame
