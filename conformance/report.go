package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ctxkit/ctxkit/internal/safetext"
)

// Status is the outcome of one conformance check. Its JSON spelling is the
// lower-case word returned by String.
type Status int

// The three outcomes a check can have.
const (
	// Pass means the target met the rule on both the adversarial input and
	// its well-behaved counterpart.
	Pass Status = iota
	// Fail means the target violated the rule; the check's evidence says what
	// was sent, what came back and what was expected.
	Fail
	// Skipped means the check does not apply to the target (for example a
	// verify check against a provider that does not declare verify).
	Skipped
)

// String returns "pass", "fail" or "skipped".
func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case Skipped:
		return "skipped"
	}
	return fmt.Sprintf("status(%d)", int(s))
}

// parseStatus reads the JSON spelling of a Status.
func parseStatus(s string) (Status, error) {
	switch s {
	case "pass":
		return Pass, nil
	case "fail":
		return Fail, nil
	case "skipped":
		return Skipped, nil
	}
	return 0, fmt.Errorf("conformance: unknown status %q (want pass, fail or skipped)", s)
}

// MarshalJSON writes the status as its lower-case word.
func (s Status) MarshalJSON() ([]byte, error) {
	switch s {
	case Pass, Fail, Skipped:
		return json.Marshal(s.String())
	}
	return nil, fmt.Errorf("conformance: cannot encode %v", s)
}

// UnmarshalJSON reads "pass", "fail" or "skipped".
func (s *Status) UnmarshalJSON(b []byte) error {
	var w string
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("conformance: status: %w", err)
	}
	v, err := parseStatus(w)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Check is the result of one named conformance check.
type Check struct {
	// Name is the check's stable name, e.g. "budget-honesty" or
	// "composition-quarantine".
	Name string `json:"name"`
	// Status is pass, fail or skipped.
	Status Status `json:"status"`
	// Evidence explains the outcome. For a failure it names what was sent,
	// what came back and what was expected; for a skip, why the check does
	// not apply.
	Evidence string `json:"evidence"`
}

// Report is the typed result of a conformance run, in the JSON shape of
// docs/protocol.md §5.5: {"target": …, "checks": [{"name", "status", "evidence"}…]}.
type Report struct {
	// Target names what was checked, e.g. "stdio: ctxkit provider files ./docs".
	Target string `json:"target"`
	// Checks are in the suite's fixed order.
	Checks []Check `json:"checks"`
}

// Passed reports whether no check failed. Skipped checks do not fail a report.
func (r *Report) Passed() bool {
	for _, c := range r.Checks {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

// Tally counts the checks by status.
func (r *Report) Tally() (pass, fail, skipped int) {
	for _, c := range r.Checks {
		switch c.Status {
		case Pass:
			pass++
		case Fail:
			fail++
		case Skipped:
			skipped++
		}
	}
	return pass, fail, skipped
}

// Check returns the check with the given name, if the report has one.
func (r *Report) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Failed returns the names of the failing checks, in report order.
func (r *Report) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == Fail {
			out = append(out, c.Name)
		}
	}
	return out
}

func (r *Report) add(name string, st Status, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, Status: st, Evidence: fmt.Sprintf(format, args...)})
}

// WriteJSON writes the report as one line of compact JSON followed by a
// newline. Evidence is written verbatim: '<', '>' and '&' are not escaped.
// A nil Checks slice is written as [].
func (r *Report) WriteJSON(w io.Writer) error {
	out := *r
	if out.Checks == nil {
		out.Checks = []Check{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("conformance: encode report: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("conformance: write report: %w", err)
	}
	return nil
}

// WriteText writes a human-readable report: one line per check and a
// closing tally.
func (r *Report) WriteText(w io.Writer) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "conformance report for %s\n", safetext.Escape(r.Target))
	for _, c := range r.Checks {
		// Evidence quotes what the provider sent: escaped, it stays on its line.
		fmt.Fprintf(&buf, "  %-7s %s: %s\n", c.Status, c.Name, safetext.Escape(c.Evidence))
	}
	p, f, s := r.Tally()
	verdict := "CONFORMANT"
	if f > 0 {
		verdict = "NOT CONFORMANT"
	}
	fmt.Fprintf(&buf, "%s: %d passed, %d failed, %d skipped\n", verdict, p, f, s)
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("conformance: write report: %w", err)
	}
	return nil
}

// ReadReport decodes a report written by WriteJSON (or by any tool that
// follows docs/protocol.md §5.5). Unknown members are ignored.
func ReadReport(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("conformance: read report: %w", err)
	}
	return &rep, nil
}
