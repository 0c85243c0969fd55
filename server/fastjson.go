package server

import (
	"encoding/json"
	"github.com/ctxkit/ctxkit/compose"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// The compose and context routes decode their bodies with a small strict
// JSON reader first, and with encoding/json only when it declines. On the
// load test's 24 KB body encoding/json spent about two thirds of a
// request's CPU: it scans the whole body once to validate it, then again to
// decode, and copies every string. The reader below makes one pass, and a
// string without escapes becomes a substring of one copy of the body.
//
// It decodes only the common shape and declines everything else: a member
// name it does not know exactly (encoding/json also matches names without
// regard to case, and ignores unknown ones), a repeated member, a null, a
// value of the wrong JSON type, a number its Go field cannot hold, a lone
// surrogate escape, nesting deeper than maxFastDepth, a missing required
// member, or a frame member that frame.FrameMember names (a timestamp,
// digest or enumeration) sent as "", which the slow path marks present
// (see frame.Frame.Has). Declining costs one extra pass and gives
// encoding/json's answer, error messages included. When it accepts, the
// result is the one encoding/json would give: FuzzFastComposeMatchesJSON
// and FuzzFastContextMatchesJSON hold it to that. Members whose types have
// their own UnmarshalJSON (provenance, relations, content_ref, transform,
// embedding, weights, previous) are delimited here and handed to
// encoding/json, so their rules live in one place.

// maxFastDepth bounds the nesting the reader walks through when it
// delimits a member handed to encoding/json; deeper input is declined.
const maxFastDepth = 64

// fastReader reads one JSON text. b and s hold the same bytes; s lets a
// string without escapes be returned without copying.
type fastReader struct {
	b []byte
	s string
	i int
}

func newFastReader(body []byte) *fastReader {
	return &fastReader{b: body, s: string(body)}
}

// ws skips JSON whitespace.
func (r *fastReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (r *fastReader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// eat consumes c after whitespace.
func (r *fastReader) eat(c byte) bool {
	if r.peek() != c {
		return false
	}
	r.i++
	return true
}

// end reports whether only whitespace is left.
func (r *fastReader) end() bool {
	r.ws()
	return r.i == len(r.b)
}

// members calls fn for each member of an object, after its name and colon;
// fn must consume the value. A name with escapes is declined.
func (r *fastReader) members(fn func(name string) bool) bool {
	if !r.eat('{') {
		return false
	}
	if r.eat('}') {
		return true
	}
	for {
		if r.peek() != '"' {
			return false
		}
		name, escaped, ok := r.rawString()
		if !ok || escaped || !r.eat(':') || !fn(name) {
			return false
		}
		if r.eat(',') {
			continue
		}
		return r.eat('}')
	}
}

// elements calls fn for each element of an array; fn must consume it.
func (r *fastReader) elements(fn func() bool) bool {
	if !r.eat('[') {
		return false
	}
	if r.eat(']') {
		return true
	}
	for {
		if !fn() {
			return false
		}
		if r.eat(',') {
			continue
		}
		return r.eat(']')
	}
}

// rawString reads a string at r.i (its opening quote) and returns its
// bytes between the quotes, undecoded, and whether it has escapes.
func (r *fastReader) rawString() (string, bool, bool) {
	start := r.i + 1
	escaped := false
	for i := start; i < len(r.b); i++ {
		i = cgpjson.PlainUntil(r.b, i, false)
		if i == len(r.b) {
			break
		}
		switch c := r.b[i]; {
		case c == '"':
			r.i = i + 1
			return r.s[start:i], escaped, true
		case c == '\\':
			escaped = true
			i++ // the escaped byte cannot end the string
		case c < 0x20:
			return "", false, false
		}
	}
	return "", false, false
}

// str reads a string value.
func (r *fastReader) str() (string, bool) {
	if r.peek() != '"' {
		return "", false
	}
	raw, escaped, ok := r.rawString()
	if !ok {
		return "", false
	}
	if !escaped {
		return raw, true
	}
	return unescape(raw)
}

// unescape decodes the escapes of a JSON string's inner bytes. It declines
// a malformed escape and a surrogate escape that is not half of a pair
// (encoding/json turns that into U+FFFD; the slow path keeps that rule).
func unescape(raw string) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(raw) {
			return "", false
		}
		switch raw[i+1] {
		case '"', '\\', '/':
			out = append(out, raw[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			ru, ok := hex4(raw, i+2)
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(ru) {
				lo, ok := hex4(raw, i+8)
				if !ok || raw[i+6] != '\\' || raw[i+7] != 'u' {
					return "", false
				}
				ru = utf16.DecodeRune(ru, lo)
				if ru == utf8.RuneError {
					return "", false
				}
				i += 6
			}
			out = utf8.AppendRune(out, ru)
			i += 6
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}

// hex4 reads four hex digits at raw[i:].
func hex4(raw string, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var v rune
	for _, c := range []byte(raw[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	return v, true
}

// number reads a number literal, checked against JSON's grammar.
func (r *fastReader) number() (string, bool) {
	r.ws()
	b, i := r.b, r.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return "", false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return "", false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return "", false
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	r.i = i
	return r.s[start:i], true
}

// float32 reads a number into an f32, as encoding/json does.
func (r *fastReader) float32() (float32, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 32)
	return float32(f), err == nil
}

// float64 reads a number into an f64, as encoding/json does.
func (r *fastReader) float64() (float64, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	return f, err == nil
}

// uint32 reads a number into a u32; a fraction, exponent, sign or
// overflow is declined.
func (r *fastReader) uint32() (uint32, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(lit, 10, 32)
	return uint32(n), err == nil
}

// int reads a number into an int; a fraction or exponent is declined.
func (r *fastReader) int() (int, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(lit, 10, strconv.IntSize)
	return int(n), err == nil
}

// bool reads true or false.
func (r *fastReader) bool() (bool, bool) {
	r.ws()
	switch {
	case r.lit("true"):
		return true, true
	case r.lit("false"):
		return false, true
	}
	return false, false
}

// lit consumes the literal word w.
func (r *fastReader) lit(w string) bool {
	if len(r.s)-r.i >= len(w) && r.s[r.i:r.i+len(w)] == w {
		r.i += len(w)
		return true
	}
	return false
}

// raw delimits one value of any type and returns its bytes, for
// encoding/json to decode.
func (r *fastReader) raw() ([]byte, bool) {
	r.ws()
	start := r.i
	if !r.skip(0) {
		return nil, false
	}
	return r.b[start:r.i], true
}

// skip consumes one value, checking its syntax.
func (r *fastReader) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	switch r.peek() {
	case '{':
		return r.members(func(string) bool { return r.skip(depth + 1) })
	case '[':
		return r.elements(func() bool { return r.skip(depth + 1) })
	case '"':
		_, ok := r.str()
		return ok
	case 't':
		return r.lit("true")
	case 'f':
		return r.lit("false")
	case 'n':
		return r.lit("null")
	default:
		_, ok := r.number()
		return ok
	}
}

// into delimits one value and decodes it with encoding/json into v.
func (r *fastReader) into(v any) bool {
	b, ok := r.raw()
	return ok && json.Unmarshal(b, v) == nil
}

// seen tracks which members of one object were read, to decline a repeat.
type seen uint64

// first marks member bit k and reports whether it was new.
func (s *seen) first(k uint) bool {
	if *s&(1<<k) != 0 {
		return false
	}
	*s |= 1 << k
	return true
}

// The required members of a ContextFrame, as bits of seen.
const (
	bitID = iota
	bitKind
	bitTitle
	bitScore
	bitTokenCost
	requiredFrameMembers = 1<<bitID | 1<<bitKind | 1<<bitTitle | 1<<bitScore | 1<<bitTokenCost
)

// once reads a member's value into *dst with read, declining a repeat.
func once[T any](s *seen, bit uint, dst *T, read func() (T, bool)) bool {
	if !s.first(bit) {
		return false
	}
	v, ok := read()
	*dst = v
	return ok
}

// oncePtr is once for a member whose field is a pointer (nil when absent).
func oncePtr[T any](s *seen, bit uint, dst **T, read func() (T, bool)) bool {
	if !s.first(bit) {
		return false
	}
	v, ok := read()
	*dst = &v
	return ok
}

// onceInto hands a member's value to encoding/json, declining a repeat.
func (r *fastReader) onceInto(s *seen, bit uint, v any) bool {
	return s.first(bit) && r.into(v)
}

// frameMember reads the value of the member name into f.
func (r *fastReader) frameMember(f *frame.Frame, name string, s *seen) bool {
	switch name {
	case "id":
		return once(s, bitID, &f.ID, r.str)
	case "kind":
		return once(s, bitKind, (*string)(&f.Kind), r.str)
	case "title":
		return once(s, bitTitle, &f.Title, r.str)
	case "score":
		return once(s, bitScore, &f.Score, r.float32)
	case "token_cost":
		return once(s, bitTokenCost, &f.TokenCost, r.uint32)
	// A member frame.FrameMember names, sent as "", declines: the slow
	// path marks it present (frame.Frame.Set), which Validate then holds
	// to its rule (D1, F4, an unknown enumeration value, or P1-P3 for
	// content).
	case "content":
		return once(s, 5, &f.Content, r.str) && f.Content != ""
	case "content_digest":
		return once(s, 6, &f.ContentDigest, r.str) && f.ContentDigest != ""
	case "uri":
		return once(s, 7, &f.URI, r.str)
	case "representation":
		return once(s, 8, (*string)(&f.Representation), r.str) && f.Representation != ""
	case "content_fidelity":
		return once(s, 9, (*string)(&f.ContentFidelity), r.str) && f.ContentFidelity != ""
	case "canonical_content_hash":
		return once(s, 10, &f.CanonicalContentHash, r.str) && f.CanonicalContentHash != ""
	case "minimum_content_fidelity":
		return once(s, 11, (*string)(&f.MinimumContentFidelity), r.str) && f.MinimumContentFidelity != ""
	case "inline_content_requirement":
		return once(s, 12, (*string)(&f.InlineContentRequirement), r.str) && f.InlineContentRequirement != ""
	case "tokenizer_ref":
		return once(s, 13, &f.TokenizerRef, r.str)
	case "valid_from":
		return once(s, 14, &f.ValidFrom, r.str) && f.ValidFrom != ""
	case "valid_to":
		return once(s, 15, &f.ValidTo, r.str) && f.ValidTo != ""
	case "recorded_at":
		return once(s, 16, &f.RecordedAt, r.str) && f.RecordedAt != ""
	case "citation_label":
		return once(s, 17, &f.CitationLabel, r.str)
	case "canonical_token_cost":
		return oncePtr(s, 18, &f.CanonicalTokenCost, r.uint32)
	case "content_ref":
		return r.onceInto(s, 19, &f.ContentRef)
	case "transform":
		return r.onceInto(s, 20, &f.Transform)
	case "provenance":
		return r.onceInto(s, 21, &f.Provenance)
	case "embedding":
		return r.onceInto(s, 22, &f.Embedding)
	case "relations":
		return r.onceInto(s, 23, &f.Relations)
	}
	return false
}

// offers reads the offers array, each frame with every required member.
func (r *fastReader) offers() ([]compose.Offer, bool) {
	out := []compose.Offer{}
	ok := r.elements(func() bool {
		var o compose.Offer
		var s seen
		ok := r.members(func(name string) bool {
			switch name {
			case "provider":
				return once(&s, 0, &o.Provider, r.str)
			case "frame":
				if !s.first(1) {
					return false
				}
				o.Frame = new(frame.Frame)
				var fs seen
				return r.members(func(name string) bool { return r.frameMember(o.Frame, name, &fs) }) &&
					fs&requiredFrameMembers == requiredFrameMembers
			}
			return false
		})
		if !ok || o.Frame == nil {
			return false
		}
		out = append(out, o)
		return true
	})
	return out, ok
}

// request reads a request object: offers and skip_invalid, which the
// compose and context routes share, and the route's other members through
// more (nil when there are none; it may use bits 2 and up of seen). It
// declines a body without offers.
func (r *fastReader) request(offers *[]compose.Offer, skip *bool, more func(name string, s *seen) bool) bool {
	var s seen
	ok := r.members(func(name string) bool {
		switch name {
		case "offers":
			return once(&s, 0, offers, r.offers)
		case "skip_invalid":
			return once(&s, 1, skip, r.bool)
		}
		return more != nil && more(name, &s)
	})
	return ok && r.end() && *offers != nil
}

// decodeFast decodes b's common shape; see fastReader.
func (b *composeBody) decodeFast(body []byte) bool {
	r := newFastReader(body)
	req := &b.ComposeRequest
	more := func(name string, s *seen) bool {
		switch name {
		case "budget":
			return oncePtr(s, 2, &req.Budget, r.int)
		case "strategy":
			return once(s, 3, &req.Strategy, r.str)
		case "quota":
			return once(s, 4, &req.Quota, r.int)
		case "weights":
			return r.onceInto(s, 5, &req.Weights)
		case "default_weight":
			return oncePtr(s, 6, &req.DefaultWeight, r.uint32)
		case "packer":
			return once(s, 7, &req.Packer, r.str)
		case "placement":
			return once(s, 8, &req.Placement, r.str)
		case "previous":
			return r.onceInto(s, 9, &req.Previous)
		case "sticky_margin":
			return once(s, 10, &req.StickyMargin, r.float64)
		case "min_prefix_tokens":
			return oncePtr(s, 11, &req.MinPrefixTokens, r.int)
		}
		return false
	}
	if !r.request(&req.Offers, &req.SkipInvalid, more) {
		*b = composeBody{}
		return false
	}
	return true
}

// decodeFast decodes b's common shape; see fastReader.
func (b *contextBody) decodeFast(body []byte) bool {
	r := newFastReader(body)
	if !r.request(&b.ContextRequest.Offers, &b.ContextRequest.SkipInvalid, nil) {
		*b = contextBody{}
		return false
	}
	return true
}
