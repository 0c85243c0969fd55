package host

import "github.com/ctxkit/ctxkit/frame"

// frameViolations returns the frame validity rules f breaks (F1–F5, D1,
// P1–P3, G1–G2), excluding B3, which the audit checks itself.
func frameViolations(f *frame.Frame) frame.Violations {
	var v frame.Violations
	add := func(rule, field, detail string) {
		v = append(v, &frame.RuleError{Rule: rule, Field: field, Detail: detail})
	}
	if !(f.Score >= 0 && f.Score <= 1) {
		add("F1", "score", "score outside [0,1]")
	}
	if isBlankStr(f.Title) {
		add("F2", "title", "title is blank")
	}
	if isBlankStr(f.CitationLabel) {
		add("F3", "citation_label", "citation_label is absent or blank")
	}
	return v
}

func isBlankStr(s string) bool {
	for _, r := range s {
		if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}
