package frame

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/ctxkit/ctxkit/rule"
)

// RuleError is one violation of a CGP protocol rule. Rule is the rule's anchor
// in the specification (F3, B3, P2, U3 ...) or "schema" for a structural
// requirement with no numbered rule; Field is the JSON path of the offending
// member (citation_label, provenance[0].digest, result.frames[2].score);
// Detail says what is wrong.
type RuleError struct {
	// Rule is the violated rule's anchor (F3, B3, P2 ...) or rule.Schema.
	Rule rule.Rule
	// Field is the JSON path of the offending member.
	Field string
	// Detail describes what is wrong.
	Detail string
}

// Error renders "RULE field: detail".
func (e *RuleError) Error() string {
	if e.Field == "" {
		return string(e.Rule) + ": " + e.Detail
	}
	return string(e.Rule) + " " + e.Field + ": " + e.Detail
}

// Violations is every rule a value breaks, in the order they were checked.
// A nil or empty Violations means the value is valid.
type Violations []*RuleError

// Err returns v as an error, or nil when v is empty.
func (v Violations) Err() error {
	if len(v) == 0 {
		return nil
	}
	return v
}

// Error joins the violations with "; ".
func (v Violations) Error() string {
	parts := make([]string, len(v))
	for i, e := range v {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns each violation, so errors.As finds a *RuleError.
func (v Violations) Unwrap() []error {
	out := make([]error, len(v))
	for i, e := range v {
		out[i] = e
	}
	return out
}

// has reports whether any violation names r.
func (v Violations) has(r rule.Rule) bool {
	for _, e := range v {
		if e.Rule == r {
			return true
		}
	}
	return false
}

// Prefix returns v with path prepended to every Field ("result.frames[2]"
// turns "score" into "result.frames[2].score"). It modifies v in place.
func (v Violations) Prefix(path string) Violations {
	if path == "" {
		return v
	}
	for _, e := range v {
		if e.Field == "" {
			e.Field = path
		} else {
			e.Field = path + "." + e.Field
		}
	}
	return v
}

// MissingMemberError reports that a JSON object lacked a required member (or
// held null there).
type MissingMemberError struct {
	Object string // the CGP type, e.g. "ContextFrame"
	Member string // the wire member, e.g. "token_cost"
}

// Error renders "decode ContextFrame: missing required member token_cost".
func (e *MissingMemberError) Error() string {
	return fmt.Sprintf("decode %s: missing required member %s", e.Object, e.Member)
}

// isBlank reports whether s is empty or only white space.
func isBlank(s string) bool {
	return strings.TrimFunc(s, unicode.IsSpace) == ""
}
