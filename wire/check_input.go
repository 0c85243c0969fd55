package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
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
		Line   int       `json:"line"`
		Rule   rule.Rule `json:"rule"`
		Field  string    `json:"field"`
		Detail string    `json:"detail"`
	}{f.Line, f.Rule, f.Field, f.Detail})
}

// String renders "line N: RULE field: detail".
func (f Finding) String() string { return "line " + strconv.Itoa(f.Line) + ": " + f.RuleError.Error() }

// Error is String, so a Finding is an error that names its line (and fmt
// prints the line rather than the embedded RuleError's message alone).
func (f Finding) Error() string { return f.String() }

// Report is the outcome of CheckInput.
type Report struct {
	// Items counts the envelopes, frames, offers and queries checked.
	Items int `json:"items"`
	// Violations lists every rule violation in input order.
	Violations []Finding `json:"violations"`
	// Errors lists the lines (or the document) that could not be decoded;
	// each is a *DecodeError.
	Errors []error `json:"-"`
}

// Valid reports whether the input decoded cleanly, held something to check
// and broke no rule.
func (r *Report) Valid() bool { return r.Checked() && len(r.Violations) == 0 && len(r.Errors) == 0 }

// Checked reports whether the input held at least one frame, envelope,
// offer or query. Input that decodes but holds none (empty input, [],
// {"cases":[]}, an unrelated document) was not checked at all.
func (r *Report) Checked() bool { return r.Items > 0 }

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
// holds: NDJSON whose lines are envelopes, bare frames, bare queries, or
// {"provider","frame"} offers; or one JSON document (which may span lines)
// holding one of those, an array of them, or a fixture document that holds
// them in its members, such as {"cases":[{"source":FRAME,
// "expected_normalized":FRAME}]} or {"missing":FRAME,"blank":FRAME}. Every
// line is checked; lines that do not decode are collected in
// Report.Errors. The returned error is for input that cannot be read at
// all. Input holding no frame, envelope, offer or query is not valid: its
// Report has Items 0 and Checked reports false.
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
			if err := checkValue(rep, ck, v, 1, "", false, 0); err != nil {
				rep.Errors = append(rep.Errors, &DecodeError{Line: 1, Err: err})
			}
			return rep, nil
		}
		first = false
		if !utf8.Valid(line) {
			rep.Errors = append(rep.Errors, &DecodeError{Line: d.Line(), Err: errInvalidUTF8})
			continue
		}
		if err := checkValue(rep, ck, line, d.Line(), "", false, 0); err != nil {
			rep.Errors = append(rep.Errors, &DecodeError{Line: d.Line(), Err: err})
		}
	}
}

// maxCheckDepth bounds how deeply CheckInput looks into arrays and
// container objects for frames, envelopes, offers and queries.
const maxCheckDepth = 32

// checkValue classifies one JSON value and checks it; ck is nil unless
// envelopes are checked as a session. An array's elements are checked in
// turn. An object is an envelope (it has "type"), an offer ("provider" and
// "frame"), a frame ("id", "kind" or "title"), or a query ("goal"); any
// other object is a container, such as the upstream fixtures'
// {"missing": FRAME, "blank": FRAME} pairs and {"cases": [{"source",
// "expected_normalized", "input"}]} documents, whose object and array
// members are classified in document order. nested is set inside a
// container, where a scalar member is skipped rather than an error; depth
// counts the arrays and containers around v.
func checkValue(rep *Report, ck *Checker, v []byte, line int, path string, nested bool, depth int) error {
	return atPath(path, checkAt(rep, ck, v, line, path, nested, depth))
}

// checkAt is checkValue without naming the path in its error.
func checkAt(rep *Report, ck *Checker, v []byte, line int, path string, nested bool, depth int) error {
	if depth > maxCheckDepth {
		// Each level is classified by decoding it, so depth multiplies
		// the work; no CGP input or fixture nests this deep.
		return fmt.Errorf("arrays and containers nested deeper than %d levels", maxCheckDepth)
	}
	switch firstByte(v) {
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return err
		}
		for i, el := range elems {
			if err := checkValue(rep, ck, el, line, path+"["+strconv.Itoa(i)+"]", nested, depth+1); err != nil {
				return err
			}
		}
		return nil
	case '{':
	default:
		if nested {
			return nil
		}
		return errNotObject
	}
	var shape struct {
		Type, Provider, Frame, ID, Kind, Title, Goal json.RawMessage
	}
	if err := json.Unmarshal(v, &shape); err != nil {
		return err
	}
	add := func(vs frame.Violations) {
		for _, e := range vs.Prefix(path) {
			rep.Violations = append(rep.Violations, Finding{Line: line, RuleError: e})
		}
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
			add(validate(env))
		}
	case shape.Provider != nil && shape.Frame != nil:
		var o compose.Offer
		if err := json.Unmarshal(v, &o); err != nil {
			return err
		}
		rep.Items++
		add(o.Validate())
	case shape.ID != nil || shape.Kind != nil || shape.Title != nil:
		var f frame.Frame
		if err := json.Unmarshal(v, &f); err != nil {
			return err
		}
		rep.Items++
		add(f.Validate())
	case shape.Goal != nil:
		var q frame.Query
		if err := json.Unmarshal(v, &q); err != nil {
			return err
		}
		rep.Items++
		add(q.Validate())
	default:
		return checkMembers(rep, ck, v, line, path, depth)
	}
	return nil
}

// checkMembers checks the object and array members of the container
// object v, in document order, each under path.name.
func checkMembers(rep *Report, ck *Checker, v []byte, line int, path string, depth int) error {
	d := json.NewDecoder(bytes.NewReader(v))
	if _, err := d.Token(); err != nil { // the opening brace
		return err
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		var member json.RawMessage
		if err := d.Decode(&member); err != nil {
			return err
		}
		p := name
		if path != "" {
			p = path + "." + name
		}
		if err := checkValue(rep, ck, member, line, p, true, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// pathError names where in a document a value failed to decode.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// atPath names path in err, unless err already names a deeper one.
func atPath(path string, err error) error {
	var pe *pathError
	if err == nil || path == "" || errors.As(err, &pe) {
		return err
	}
	return &pathError{path: path, err: err}
}
