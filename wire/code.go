package wire

import "slices"

// Code is an error envelope's code, kept verbatim. The vocabulary is open: a
// code this revision does not define, or an absent one, is acted on as
// CodeInternal (rules X1, X2).
type Code string

// The error codes of contextgraph/1.
const (
	CodeBadRequest                Code = "bad_request"
	CodeUnsupportedKind           Code = "unsupported_kind"
	CodeUnsupportedRepresentation Code = "unsupported_representation"
	CodeIncompatibleVersion       Code = "incompatible_version"
	CodeBudgetUnsatisfiable       Code = "budget_unsatisfiable"
	CodeUnavailable               Code = "unavailable"
	CodeShuttingDown              Code = "shutting_down"
	CodeInternal                  Code = "internal"
)

// codes are the eight base codes.
var codes = [...]Code{CodeBadRequest, CodeUnsupportedKind, CodeUnsupportedRepresentation,
	CodeIncompatibleVersion, CodeBudgetUnsatisfiable, CodeUnavailable, CodeShuttingDown, CodeInternal}

// isKnown reports whether c is one of the eight base codes.
func (c Code) isKnown() bool { return slices.Contains(codes[:], c) }

// Effective returns the code a receiver acts on: c when it is a base code,
// else CodeInternal.
func (c Code) Effective() Code {
	if c.isKnown() {
		return c
	}
	return CodeInternal
}

// Retryable reports whether the same request may succeed later: only for
// unavailable (retry with backoff) and shutting_down (respawn the provider).
func (c Code) Retryable() bool {
	e := c.Effective()
	return e == CodeUnavailable || e == CodeShuttingDown
}

// String returns the code verbatim.
func (c Code) String() string { return string(c) }
