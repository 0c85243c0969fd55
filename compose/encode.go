package compose

import (
	"strconv"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// AppendJSON appends the result's JSON encoding to dst: byte for byte what
// MarshalJSON writes. A composition without a cache report, the common
// answer of the HTTP service, is written directly, without encoding/json's
// reflection and the re-compaction of every nested MarshalJSON value (a
// fifth of a compose request's CPU before); the server's
// FuzzAppendResultMatchesMarshal holds it to MarshalJSON.
func (r *Result) AppendJSON(dst []byte) ([]byte, error) {
	if r.reported {
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	}
	dst = append(dst, `{"prompt":`...)
	dst = cgpjson.AppendStdString(dst, r.Prompt)
	dst = append(dst, `,"citations":[`...)
	for i := range r.Citations {
		c := &r.Citations[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"label":`...)
		dst = cgpjson.AppendStdString(dst, c.Label)
		dst = append(dst, `,"frame":`...)
		dst = c.Frame.AppendJSON(dst)
		dst = append(dst, `,"provenance":[`...)
		for j := range c.Provenance {
			if j > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = c.Provenance[j].AppendJSON(dst); err != nil {
				return nil, err
			}
		}
		dst = append(dst, "]}"...)
	}
	a := &r.Audit
	dst = append(dst, `],"audit":{"budget":`...)
	dst = strconv.AppendInt(dst, int64(a.Budget), 10)
	dst = append(dst, `,"tokens_used":`...)
	dst = strconv.AppendInt(dst, int64(a.TokensUsed), 10)
	dst = append(dst, `,"strategy":`...)
	dst = cgpjson.AppendStdString(dst, a.Strategy)
	dst = append(dst, `,"packer":`...)
	dst = cgpjson.AppendStdString(dst, a.Packer)
	dst = append(dst, `,"entries":[`...)
	// Attestation states repeat (every entry of an unchecked composition is
	// not_checked); the states are comparable values whose encoding
	// depends only on the value, so equal neighbours reuse the previous
	// encoding.
	var lastState Attestation
	var lastAtt []byte
	for i := range a.Entries {
		e := &a.Entries[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"frame":`...)
		dst = e.Frame.AppendJSON(dst)
		dst = append(dst, `,"disposition":`...)
		dst = cgpjson.AppendStdString(dst, e.Disposition.String())
		switch e.Disposition {
		case Included:
			if v := e.Verification.String(); v != "" {
				dst = append(dst, `,"verification":`...)
				dst = cgpjson.AppendStdString(dst, v)
			}
		case Excluded:
			dst = append(dst, `,"reason":{"kind":`...)
			dst = cgpjson.AppendStdString(dst, e.Reason.Kind.String())
			switch e.Reason.Kind {
			case Duplicate:
				dst = append(dst, `,"kept":`...)
				dst = e.Reason.Kept.AppendJSON(dst)
			case OverBudget, PackingStopped:
				dst = append(dst, `,"cost":`...)
				dst = strconv.AppendInt(dst, int64(e.Reason.Cost), 10)
				dst = append(dst, `,"remaining":`...)
				dst = strconv.AppendInt(dst, int64(e.Reason.Remaining), 10)
			}
			dst = append(dst, '}')
		}
		if st := e.attestation(); lastAtt == nil || st != lastState {
			att, err := st.MarshalJSON()
			if err != nil {
				return nil, err
			}
			lastState, lastAtt = st, att
		}
		dst = append(dst, `,"attestation":`...)
		dst = append(dst, lastAtt...)
		dst = append(dst, '}')
	}
	return append(dst, "]}}"...), nil
}
