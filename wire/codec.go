package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// errInvalidUTF8 is wrapped by a *DecodeError when a line is not UTF-8.
var errInvalidUTF8 = errors.New("invalid UTF-8")

// errNotObject is wrapped by a *DecodeError when a line is JSON but not an object.
var errNotObject = errors.New("envelope is not a JSON object")

// DecodeError is why a line or body could not be decoded into an envelope.
// Line is the 1-based line number when decoding a stream, else 0. Err is a
// *json.SyntaxError, *json.UnmarshalTypeError, *frame.MissingMemberError,
// *TooLongError, or an error saying the line is not UTF-8 or not a JSON
// object.
type DecodeError struct {
	// Line is the 1-based line number in the stream; 0 when a single body
	// or document was decoded.
	Line int
	// Err is the underlying cause (see the type's comment for the kinds).
	Err error
}

// Error renders "decode line N: cause", or "decode: cause" without a line.
// A member of the wrong JSON type or out of its range is named by its path
// and protocol type ("member query.max_frames: number -1 is not a u32 ...")
// rather than by encoding/json's Go struct wording.
func (e *DecodeError) Error() string {
	cause := describeDecodeErr(e.Err)
	if e.Line > 0 {
		return fmt.Sprintf("decode line %d: %s", e.Line, cause)
	}
	return "decode: " + cause
}

// describeDecodeErr renders err, rewording a *json.UnmarshalTypeError in
// the protocol's terms.
func describeDecodeErr(err error) string {
	var te *json.UnmarshalTypeError
	if err == nil || !errors.As(err, &te) || te.Type == nil {
		if err == nil {
			return "<nil>"
		}
		return err.Error()
	}
	var want string
	switch te.Type.Kind() {
	case reflect.Uint32:
		want = "a u32 (a whole number from 0 to 4294967295)"
	case reflect.Uint64:
		want = "a u64 (a whole number from 0 to 18446744073709551615)"
	case reflect.Float32:
		want = "an f32 number"
	case reflect.Float64:
		want = "a number"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "a boolean"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Struct, reflect.Map:
		want = "an object"
	default:
		return err.Error()
	}
	member := te.Field
	if member == "" {
		member = "(top level)"
	}
	return fmt.Sprintf("member %s: %s is not %s", member, te.Value, want)
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Marshal returns the exact CGP encoding of env, without a line feed.
func Marshal(env Envelope) ([]byte, error) { return appendEnvelope(nil, env) }

// appendEnvelope appends the exact CGP encoding of env to dst. A NaN or
// infinite f32 is an error; so is a nil envelope.
func appendEnvelope(dst []byte, env Envelope) ([]byte, error) {
	if u, ok := env.(*Unknown); ok {
		if u == nil || !json.Valid(u.Raw) {
			return dst, errors.New("encode envelope: unknown envelope holds no valid JSON")
		}
		return append(dst, u.Raw...), nil
	}
	if env == nil {
		return dst, errors.New("encode envelope: nil envelope")
	}
	w := cgpjson.W{B: dst}
	w.Open()
	w.Str("type", env.Type())
	var err error
	switch e := env.(type) {
	case *Handshake:
		w.Str("protocol_version", e.ProtocolVersion)
	case *HandshakeAck:
		w.Str("protocol_version", e.ProtocolVersion)
		w.Key("provider")
		err = raw(&w, e.Provider)
		w.Key("capabilities")
		err = errors.Join(err, raw(&w, e.Capabilities))
		if len(e.AttesterKeys) > 0 {
			w.Key("attester_keys")
			w.OpenArray()
			for _, k := range e.AttesterKeys {
				w.Elem()
				k.write(&w)
			}
			w.CloseArray()
		}
	case *Query:
		w.OptStr("id", e.ID)
		w.Key("query")
		err = raw(&w, e.Query)
	case *Frames:
		w.OptStr("id", e.ID)
		w.Key("result")
		w.B, err = e.Result.appendJSON(w.B)
	case *Verify:
		w.Key("request")
		e.Request.write(&w)
	case *Verified:
		w.Key("response")
		e.Response.write(&w)
	case *Shutdown:
	case *Error:
		w.OptStr("id", e.ID)
		w.OptStr("code", string(e.Code))
		w.Str("message", e.Message)
	}
	w.Close()
	if err == nil {
		err = w.Err
	}
	if err != nil {
		return dst, fmt.Errorf("encode %s envelope: %w", env.Type(), err)
	}
	return w.B, nil
}

// appendJSON appends the CGP encoding of r (a ContextQueryResult) to dst.
// Frames is written as [] when nil.
func (r *Result) appendJSON(dst []byte) ([]byte, error) {
	w := cgpjson.W{B: dst}
	w.Open()
	w.Key("frames")
	w.OpenArray()
	for i := range r.Frames {
		w.Elem()
		var err error
		if w.B, err = r.Frames[i].AppendJSON(w.B); err != nil {
			return dst, fmt.Errorf("frames[%d]: %w", i, err)
		}
	}
	w.CloseArray()
	w.Bool("truncated", r.Truncated)
	w.OptUint("dropped_estimate", r.DroppedEstimate)
	if len(r.FrameAttestations) > 0 {
		w.Key("frame_attestations")
		w.OpenArray()
		for i := range r.FrameAttestations {
			w.Elem()
			r.FrameAttestations[i].write(&w)
		}
		w.CloseArray()
	}
	if r.ResultAttestation != nil {
		w.Key("result_attestation")
		r.ResultAttestation.write(&w)
	}
	if len(r.Diagnostics) > 0 {
		if !json.Valid(r.Diagnostics) || bytes.TrimSpace(r.Diagnostics)[0] != '{' {
			return dst, errors.New("ctxkit:diagnostics: not a JSON object")
		}
		w.Key("ctxkit:diagnostics")
		w.Raw(bytes.TrimSpace(r.Diagnostics))
	}
	w.Close()
	return w.B, w.Err
}

// MarshalJSON returns the CGP encoding of r.
func (r Result) MarshalJSON() ([]byte, error) { return r.appendJSON(nil) }

// resultWire is the decoding shape of a result: required members are
// pointers so their absence shows.
type resultWire struct {
	Frames            *[]frame.Frame     `json:"frames"`
	Truncated         *bool              `json:"truncated"`
	DroppedEstimate   *uint32            `json:"dropped_estimate"`
	FrameAttestations []FrameAttestation `json:"frame_attestations"`
	ResultAttestation *Attestation       `json:"result_attestation"`
	Diagnostics       json.RawMessage    `json:"ctxkit:diagnostics"`
}

func (w *resultWire) to(r *Result) error {
	if w.Frames == nil {
		return &frame.MissingMemberError{Object: "ContextQueryResult", Member: "frames"}
	}
	if w.Truncated == nil {
		return &frame.MissingMemberError{Object: "ContextQueryResult", Member: "truncated"}
	}
	*r = Result{Frames: *w.Frames, Truncated: *w.Truncated, DroppedEstimate: w.DroppedEstimate,
		FrameAttestations: w.FrameAttestations, ResultAttestation: w.ResultAttestation}
	if d := bytes.TrimSpace(w.Diagnostics); len(d) > 0 && d[0] == '{' {
		r.Diagnostics = w.Diagnostics // null, or anything but an object, is no diagnostics
	}
	return nil
}

// UnmarshalJSON decodes a result; frames and truncated are required.
func (r *Result) UnmarshalJSON(b []byte) error {
	var w resultWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	return w.to(r)
}

func (a *Attestation) write(w *cgpjson.W) {
	w.Open()
	w.Str("signed_commitment", a.SignedCommitment)
	w.Str("key_id", a.KeyID)
	w.Str("algorithm", a.Algorithm)
	w.Str("attester_id", a.AttesterID)
	w.Str("signature", a.Signature)
	w.Str("issued_at", a.IssuedAt)
	w.Close()
}

// MarshalJSON returns the CGP encoding of a.
func (a Attestation) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(a.write) }

func (f *FrameAttestation) write(w *cgpjson.W) {
	w.Open()
	w.Key("frame")
	w.B = f.Frame.AppendJSON(w.B)
	if f.Attestation != nil {
		w.Key("attestation")
		f.Attestation.write(w)
	}
	if f.InclusionProof != nil {
		w.Key("inclusion_proof")
		p := f.InclusionProof
		w.Open()
		w.Uint("leaf_index", p.LeafIndex)
		w.Uint("leaf_count", p.LeafCount)
		w.Key("path")
		w.OpenArray()
		for _, s := range p.Path {
			w.Elem()
			w.Open()
			w.Str("sibling", s.Sibling)
			w.Bool("sibling_is_left", s.SiblingIsLeft)
			w.Close()
		}
		w.CloseArray()
		w.Close()
	}
	w.Close()
}

// MarshalJSON returns the CGP encoding of f.
func (f FrameAttestation) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(f.write) }

func (k *AttesterKey) write(w *cgpjson.W) {
	w.Open()
	w.Str("key_id", k.KeyID)
	w.Str("algorithm", k.Algorithm)
	w.Str("public_key", k.PublicKey)
	w.Close()
}

// MarshalJSON returns the CGP encoding of k.
func (k AttesterKey) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(k.write) }

func (r *VerifyRequest) write(w *cgpjson.W) {
	w.Open()
	w.Key("frames")
	w.OpenArray()
	for _, id := range r.Frames {
		w.Elem()
		w.B = id.AppendJSON(w.B)
	}
	w.CloseArray()
	w.Close()
}

// MarshalJSON returns the CGP encoding of r.
func (r VerifyRequest) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(r.write) }

// UnmarshalJSON decodes a verify request; frames is required.
func (r *VerifyRequest) UnmarshalJSON(b []byte) error {
	var aux struct {
		Frames *[]frame.ID `json:"frames"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Frames == nil {
		return &frame.MissingMemberError{Object: "VerifyRequest", Member: "frames"}
	}
	r.Frames = *aux.Frames
	return nil
}

func (r *VerifyResponse) write(w *cgpjson.W) {
	w.Open()
	w.Key("verdicts")
	w.OpenArray()
	for i := range r.Verdicts {
		w.Elem()
		v := &r.Verdicts[i]
		w.Open()
		w.Key("frame")
		w.B = v.Frame.AppendJSON(w.B)
		w.Str("status", string(v.Status))
		w.OptStr("replacement_digest", v.ReplacementDigest)
		w.Close()
	}
	w.CloseArray()
	w.Close()
}

// MarshalJSON returns the CGP encoding of r.
func (r VerifyResponse) MarshalJSON() ([]byte, error) { return cgpjson.Marshal(r.write) }

// UnmarshalJSON decodes a verify response; verdicts is required.
func (r *VerifyResponse) UnmarshalJSON(b []byte) error {
	var aux struct {
		Verdicts *[]Verdict `json:"verdicts"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Verdicts == nil {
		return &frame.MissingMemberError{Object: "VerifyResponse", Member: "verdicts"}
	}
	r.Verdicts = *aux.Verdicts
	return nil
}

// UnmarshalJSON decodes a verdict; frame and status are required.
func (v *Verdict) UnmarshalJSON(b []byte) error {
	var aux struct {
		Frame             *frame.ID `json:"frame"`
		Status            *Status   `json:"status"`
		ReplacementDigest string    `json:"replacement_digest"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Frame == nil {
		return &frame.MissingMemberError{Object: "FrameVerdict", Member: "frame"}
	}
	if aux.Status == nil {
		return &frame.MissingMemberError{Object: "FrameVerdict", Member: "status"}
	}
	*v = Verdict{Frame: *aux.Frame, Status: *aux.Status, ReplacementDigest: aux.ReplacementDigest}
	return nil
}

// Unmarshal decodes one envelope (one NDJSON line without its line feed, or
// one HTTP body). An envelope of a type this revision does not define decodes
// to *Unknown. Failures are *DecodeError.
func Unmarshal(data []byte) (Envelope, error) {
	env, err := unmarshal(data)
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	return env, nil
}

func unmarshal(data []byte) (Envelope, error) {
	if !utf8.Valid(data) {
		return nil, errInvalidUTF8
	}
	if first := firstByte(data); first != '{' && json.Valid(data) {
		return nil, errNotObject
	}
	typ, ok := sniffType(data)
	if !ok {
		var head struct {
			Type *string `json:"type"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return nil, err
		}
		if head.Type == nil {
			return nil, &frame.MissingMemberError{Object: "envelope", Member: "type"}
		}
		typ = *head.Type
	}
	switch typ {
	case typeHandshake:
		return decodeHandshake(data)
	case typeHandshakeAck:
		return decodeHandshakeAck(data)
	case typeQuery:
		return decodeQuery(data)
	case typeFrames:
		return decodeFrames(data)
	case typeVerify:
		return decodeVerify(data)
	case typeVerified:
		return decodeVerified(data)
	case typeShutdown:
		return decodeShutdown(data)
	case typeError:
		return decodeError(data)
	default:
		if ok { // the type was sniffed, so the JSON is not yet checked
			if err := json.Unmarshal(data, new(struct{})); err != nil {
				return nil, err
			}
		}
		return &Unknown{Tag: typ, Raw: append([]byte(nil), data...)}, nil
	}
}

func decodeHandshake(data []byte) (Envelope, error) {
	var aux struct {
		ProtocolVersion *string `json:"protocol_version"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return nil, err
	}
	if aux.ProtocolVersion == nil {
		return nil, missing(typeHandshake, "protocol_version")
	}
	return &Handshake{ProtocolVersion: *aux.ProtocolVersion}, nil
}

func decodeHandshakeAck(data []byte) (Envelope, error) {
	var aux struct {
		ProtocolVersion *string             `json:"protocol_version"`
		Provider        *frame.ProviderInfo `json:"provider"`
		Capabilities    *frame.Capabilities `json:"capabilities"`
		AttesterKeys    []AttesterKey       `json:"attester_keys"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return nil, err
	}
	switch {
	case aux.ProtocolVersion == nil:
		return nil, missing(typeHandshakeAck, "protocol_version")
	case aux.Provider == nil:
		return nil, missing(typeHandshakeAck, "provider")
	case aux.Capabilities == nil:
		return nil, missing(typeHandshakeAck, "capabilities")
	}
	return &HandshakeAck{ProtocolVersion: *aux.ProtocolVersion, Provider: *aux.Provider,
		Capabilities: *aux.Capabilities, AttesterKeys: aux.AttesterKeys}, nil
}

func decodeQuery(data []byte) (Envelope, error) {
	var aux struct {
		ID    string       `json:"id"`
		Query *frame.Query `json:"query"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return nil, err
	}
	if aux.Query == nil {
		return nil, missing(typeQuery, "query")
	}
	return &Query{ID: aux.ID, Query: *aux.Query}, nil
}

func decodeFrames(data []byte) (Envelope, error) {
	// resultWire has no UnmarshalJSON, so the whole envelope decodes in
	// one pass instead of re-scanning the result.
	var aux struct {
		ID     string      `json:"id"`
		Result *resultWire `json:"result"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return nil, err
	}
	if aux.Result == nil {
		return nil, missing(typeFrames, "result")
	}
	f := &Frames{ID: aux.ID}
	if err := aux.Result.to(&f.Result); err != nil {
		return nil, err
	}
	return f, nil
}

func decodeVerify(data []byte) (Envelope, error) {
	var aux struct {
		Request *VerifyRequest `json:"request"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return nil, err
	}
	if aux.Request == nil {
		return nil, missing(typeVerify, "request")
	}
	return &Verify{Request: *aux.Request}, nil
}

func decodeVerified(data []byte) (Envelope, error) {
	var aux struct {
		Response *VerifyResponse `json:"response"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return nil, err
	}
	if aux.Response == nil {
		return nil, missing(typeVerified, "response")
	}
	return &Verified{Response: *aux.Response}, nil
}

func decodeShutdown(data []byte) (Envelope, error) {
	if err := json.Unmarshal(data, new(struct{})); err != nil {
		return nil, err
	}
	return &Shutdown{}, nil
}

func decodeError(data []byte) (Envelope, error) {
	var aux struct {
		ID      string  `json:"id"`
		Code    Code    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return nil, err
	}
	if aux.Message == nil {
		return nil, missing(typeError, "message")
	}
	return &Error{ID: aux.ID, Code: aux.Code, Message: *aux.Message}, nil
}

// sniffType reads the envelope type when it is the first member and spelled
// without escapes, as every serializer writes it, so that the envelope is
// decoded in one pass. Otherwise it reports false and the caller decodes the
// type member properly.
func sniffType(b []byte) (string, bool) {
	i := cgpjson.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return "", false
	}
	i = cgpjson.SkipSpace(b, i+1)
	const key = `"type"`
	if len(b)-i < len(key) || string(b[i:i+len(key)]) != key {
		return "", false
	}
	i = cgpjson.SkipSpace(b, i+len(key))
	if i >= len(b) || b[i] != ':' {
		return "", false
	}
	i = cgpjson.SkipSpace(b, i+1)
	if i >= len(b) || b[i] != '"' {
		return "", false
	}
	start := i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return string(b[start:j]), true
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

func missing(envelope, member string) error {
	return &frame.MissingMemberError{Object: envelope + " envelope", Member: member}
}

// firstByte returns the first byte of b that is not JSON whitespace, or 0.
func firstByte(b []byte) byte {
	if i := cgpjson.SkipSpace(b, 0); i < len(b) {
		return b[i]
	}
	return 0
}

// raw writes v's own encoding as the current value; the handshake and
// query shapes are frame's, and rare enough that the copy costs nothing.
func raw(w *cgpjson.W, v json.Marshaler) error {
	b, err := v.MarshalJSON()
	w.Raw(b)
	return err
}
