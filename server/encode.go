package server

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/trust"
)

// appendResult appends compose.Result's JSON encoding for a composition
// that carries no cache report, byte for byte what Result.MarshalJSON
// writes, without going through encoding/json's reflection and the
// re-compaction of every nested MarshalJSON value (a fifth of a compose
// request's CPU before). TestAppendResultMatchesMarshal and
// FuzzAppendResultMatchesMarshal hold it to Result.MarshalJSON; a result with
// a cache report is encoded by Result.MarshalJSON itself.
func appendResult(dst []byte, r *compose.Result) ([]byte, error) {
	dst = append(dst, `{"prompt":`...)
	dst = appendJSONString(dst, r.Prompt)
	dst = append(dst, `,"citations":[`...)
	for i := range r.Citations {
		c := &r.Citations[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"label":`...)
		dst = appendJSONString(dst, c.Label)
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
	dst = appendJSONString(dst, a.Strategy)
	dst = append(dst, `,"packer":`...)
	dst = appendJSONString(dst, a.Packer)
	dst = append(dst, `,"entries":[`...)
	// Attestation states repeat (every entry of an unchecked composition is
	// not_checked); trust.State is comparable and its encoding depends only
	// on its value, so equal neighbours reuse the previous encoding.
	var lastState trust.State
	var lastAtt []byte
	for i := range a.Entries {
		e := &a.Entries[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"frame":`...)
		dst = e.Frame.AppendJSON(dst)
		dst = append(dst, `,"disposition":`...)
		dst = appendJSONString(dst, e.Disposition.String())
		switch e.Disposition {
		case compose.Included:
			if v := e.Verification.String(); v != "" {
				dst = append(dst, `,"verification":`...)
				dst = appendJSONString(dst, v)
			}
		case compose.Excluded:
			dst = append(dst, `,"reason":{"kind":`...)
			dst = appendJSONString(dst, e.Reason.Kind.String())
			switch e.Reason.Kind {
			case compose.Duplicate:
				dst = append(dst, `,"kept":`...)
				dst = e.Reason.Kept.AppendJSON(dst)
			case compose.OverBudget, compose.PackingStopped:
				dst = append(dst, `,"cost":`...)
				dst = strconv.AppendInt(dst, int64(e.Reason.Cost), 10)
				dst = append(dst, `,"remaining":`...)
				dst = strconv.AppendInt(dst, int64(e.Reason.Remaining), 10)
			}
			dst = append(dst, '}')
		}
		if lastAtt == nil || e.Attestation != lastState {
			att, err := e.Attestation.MarshalJSON()
			if err != nil {
				return nil, err
			}
			lastState, lastAtt = e.Attestation, att
		}
		dst = append(dst, `,"attestation":`...)
		dst = append(dst, lastAtt...)
		dst = append(dst, '}')
	}
	return append(dst, "]}}"...), nil
}

// appendJSONString appends s as encoding/json writes a string with HTML
// escaping off: cgpjson.AppendString's escapes, except that encoding/json
// also escapes U+2028 and U+2029 and writes invalid UTF-8 as the escape
// \ufffd, so a string holding any of these goes through encoding/json.
func appendJSONString(dst []byte, s string) []byte {
	if utf8.ValidString(s) && !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029") {
		return cgpjson.AppendString(dst, s)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return append(dst, b...)
}
