package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
)

// Finding is one rule violation in an input, at a 1-based line.
type Finding struct {
	// Line is the 1-based line of the offending item in the input.
	Line int `json:"line"`
	*frame.RuleError
}

// MarshalJSON encodes {"line","rule","field","detail"}.
func (f Finding) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Line   int    `json:"line"`
		Rule   string `json:"rule"`
		Field  string `json:"field"`
		Detail string `json:"detail"`
	}{f.Line, f.Rule, f.Field, f.Detail})
}

// String renders "line N: RULE field: detail".
func (f Finding) String() string { return "line " + strconv.Itoa(f.Line) + ": " + f.RuleError.Error() }

// Error is String, so a Finding is an error that names its line (and fmt
// prints the line rather than the embedded RuleError's message alone).
func (f Finding) Error() string { return f.String() }

// Report is the outcome of CheckInput.
type Report struct {
	// Items counts the envelopes, frames and offers checked.
	Items int `json:"items"`
	// Violations lists every rule violation in input order.
	Violations []Finding `json:"violations"`
	// Errors lists the lines (or the document) that could not be decoded;
	// each is a *DecodeError.
	Errors []error `json:"-"`
}

// Valid reports whether the input decoded cleanly and broke no rule.
func (r *Report) Valid() bool { return len(r.Violations) == 0 && len(r.Errors) == 0 }

// CheckOptions configure CheckInput. A nil *CheckOptions means the defaults.
type CheckOptions struct {
	// Decoder bounds lines and documents (default DefaultMaxLineBytes).
	Decoder DecoderOptions
	// Session checks the envelopes as one recorded session with a Checker,
	// adding the rules that span envelopes (B1, B4, Q1, E1, H4). By default
	// each envelope is checked on its own, as for a collection of vectors.
	Session bool
}

// CheckInput validates CGP input of any of the shapes a person or a pipeline
// holds: NDJSON whose lines are envelopes, bare frames, or
// {"provider","frame"} offers; or one JSON document (which may span lines)
// holding one of those, an array of them, or a fixture document
// {"cases":[{"source":FRAME,"expected_normalized":FRAME}]}. Every line is
// checked; lines that do not decode are collected in Report.Errors. The
// returned error is for input that cannot be read at all.
func CheckInput(r io.Reader, opts *CheckOptions) (*Report, error) {
	if opts == nil {
		opts = &CheckOptions{}
	}
	rep := &Report{}
	d := NewDecoder(r, &opts.Decoder)
	ck := &Checker{}
	if !opts.Session {
		ck = nil
	}
	first := true
	for {
		line, err := d.ReadLine()
		var de *DecodeError
		switch {
		case errors.Is(err, io.EOF):
			return rep, nil
		case errors.As(err, &de):
			rep.Errors = append(rep.Errors, de)
			first = false
			continue
		case err != nil:
			return rep, err
		}
		if first && !json.Valid(line) && utf8.Valid(line) {
			// Not a complete value on its own line: one multi-line document.
			doc, err := d.rest(line)
			if err != nil {
				if errors.As(err, &de) {
					rep.Errors = append(rep.Errors, de)
					return rep, nil
				}
				return rep, err
			}
			var v json.RawMessage
			if err := json.Unmarshal(doc, &v); err != nil {
				rep.Errors = append(rep.Errors, &DecodeError{Line: 1, Err: err})
				return rep, nil
			}
			if err := checkValue(rep, ck, v, 1, ""); err != nil {
				rep.Errors = append(rep.Errors, &DecodeError{Line: 1, Err: err})
			}
			return rep, nil
		}
		first = false
		if !utf8.Valid(line) {
			rep.Errors = append(rep.Errors, &DecodeError{Line: d.Line(), Err: ErrInvalidUTF8})
			continue
		}
		if err := checkValue(rep, ck, line, d.Line(), ""); err != nil {
			rep.Errors = append(rep.Errors, &DecodeError{Line: d.Line(), Err: err})
		}
	}
}

// checkValue classifies one JSON value and checks it; ck is nil unless
// envelopes are checked as a session.
func checkValue(rep *Report, ck *Checker, v []byte, line int, path string) error {
	add := func(vs frame.Violations) {
		for _, e := range vs.Prefix(path) {
			rep.Violations = append(rep.Violations, Finding{Line: line, RuleError: e})
		}
	}
	switch firstByte(v) {
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return err
		}
		for i, el := range elems {
			if err := checkValue(rep, ck, el, line, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return fmt.Errorf("%s[%d]: %w", path, i, err)
			}
		}
		return nil
	case '{':
	default:
		return ErrNotObject
	}
	var shape struct {
		Type     json.RawMessage `json:"type"`
		Provider json.RawMessage `json:"provider"`
		Frame    json.RawMessage `json:"frame"`
		Cases    json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(v, &shape); err != nil {
		return err
	}
	switch {
	case shape.Type != nil:
		env, err := unmarshal(v)
		if err != nil {
			return err
		}
		rep.Items++
		if ck != nil {
			add(ck.Check(env))
		} else {
			add(Validate(env))
		}
	case shape.Provider != nil && shape.Frame != nil:
		var o Offer
		if err := json.Unmarshal(v, &o); err != nil {
			return err
		}
		rep.Items++
		if isBlank(o.Provider) {
			// The provider id is half of every offered frame's identity.
			add(frame.Violations{rule(frame.RuleSchema, "provider", "offer's provider id is blank")})
		}
		add(o.Frame.Validate().Prefix("frame"))
	case shape.Cases != nil:
		var doc struct {
			Cases []struct {
				Source     *frame.Frame `json:"source"`
				Normalized *frame.Frame `json:"expected_normalized"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(v, &doc); err != nil {
			return err
		}
		for i, c := range doc.Cases {
			p := "cases[" + strconv.Itoa(i) + "]"
			if c.Source != nil {
				rep.Items++
				add(c.Source.Validate().Prefix(p + ".source"))
			}
			if c.Normalized != nil {
				rep.Items++
				add(c.Normalized.Validate().Prefix(p + ".expected_normalized"))
			}
		}
	default:
		var f frame.Frame
		if err := json.Unmarshal(v, &f); err != nil {
			return err
		}
		rep.Items++
		add(f.Validate())
	}
	return nil
}
