// Package wire is the Context Graph Protocol wire: the envelopes a host and a
// provider exchange, their byte-exact JSON encoding, an NDJSON encoder and a
// bounded line decoder for stdio, one-envelope bodies for HTTP, error codes,
// and protocol-version families.
//
// An envelope is one of the concrete types Handshake, HandshakeAck, Query,
// Frames, Verify, Verified, Shutdown and Error, or Unknown for a type this
// revision does not define (which a receiver answers or ignores; decoding it
// is not an error). Decoding follows rule U1: unknown members are ignored at
// every level and null stands for an absent optional member.
//
// Encoding reproduces the reference serializer byte for byte: members in
// protocol order, absent optionals omitted, no HTML escaping, f32 numbers in
// their shortest form with ".0" on integral values.
//
// validate checks the rules one envelope can break; a Checker adds the rules
// that span a session (a result against its query: B1, B4, Q1; E1; H4).
// CheckInput, behind `ctxkit validate`, checks NDJSON or a JSON document of
// envelopes, frames or offers, and ReadOffers reads the composer's
// {"provider","frame"} offer format.
//
// Bad input never panics: it is a *DecodeError wrapping the cause (a JSON
// syntax or type error, a *frame.MissingMemberError, a *TooLongError,
// or a line that is not UTF-8 or not a JSON object), and memory stays bounded by the line limit.
package wire
