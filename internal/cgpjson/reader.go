package cgpjson

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Reader is a small strict JSON reader for the fast decoders of the shapes
// CGP and the HTTP API exchange. On a 24 KB compose body encoding/json spent
// about two thirds of a request's CPU: it scans the whole body once to
// validate it, then again to decode, and copies every string. A Reader
// makes one pass, and a string without escapes becomes a substring of one
// copy of the body.
//
// It reads only what it is sure of and declines (returns false) the rest:
// an unknown or repeated member name, a null, a value of the wrong JSON
// type, a number its Go field cannot hold, a lone surrogate escape, nesting
// deeper than maxDepth. A caller that declines falls back to encoding/json,
// so encoding/json's answer, error messages included, stands for every
// input a Reader does not take.
type Reader struct {
	b []byte
	s string // the same bytes as b, so a string without escapes is not copied
	i int
}

// maxDepth bounds the nesting a Reader walks through when it delimits a
// value handed to encoding/json; deeper input is declined.
const maxDepth = 64

// NewReader returns a Reader of body.
func NewReader(body []byte) *Reader {
	return &Reader{b: body, s: string(body)}
}

// Value reads one value into dst: a *string, *bool, *int, **int, *float32,
// *float64, *uint32 or **uint32 as encoding/json would (a pointer is set
// even for a zero value). Any other dst declines; Into takes those. (dst
// does not escape, so a caller's variables stay on its stack.)
func (r *Reader) Value(dst any) bool {
	var ok bool
	switch d := dst.(type) {
	case *string:
		*d, ok = r.str()
	case *bool:
		*d, ok = r.bool()
	case *int:
		*d, ok = r.int()
	case **int:
		v, vok := r.int()
		*d, ok = &v, vok
	case *float32:
		*d, ok = r.float32()
	case *float64:
		*d, ok = r.float64()
	case *uint32:
		*d, ok = r.uint32()
	case **uint32:
		v, vok := r.uint32()
		*d, ok = &v, vok
	}
	return ok
}

// Into delimits one value and hands it to encoding/json to decode into v,
// for members whose types have their own UnmarshalJSON.
func (r *Reader) Into(v any) bool {
	b, ok := r.raw()
	return ok && json.Unmarshal(b, v) == nil
}

// ws skips JSON whitespace.
func (r *Reader) ws() { r.i = SkipSpace(r.b, r.i) }

// SkipSpace returns the index of the first byte of b from i on that is not
// JSON whitespace (space, tab, newline, carriage return), or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// peek returns the next byte after whitespace, or 0 at the end.
func (r *Reader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// eat consumes c after whitespace.
func (r *Reader) eat(c byte) bool {
	if r.peek() != c {
		return false
	}
	r.i++
	return true
}

// End reports whether only whitespace is left.
func (r *Reader) End() bool {
	r.ws()
	return r.i == len(r.b)
}

// Object reads an object, calling fn with the position in names of each
// member after its name and colon (-1 when names is nil); fn must consume
// the value. Every name must be one of names
// (encoding/json would also match it without regard to case, or ignore
// it) and come at most once, unless names is nil; a name with escapes is
// declined. seen has bit i set for each names[i] read. Listing names in
// the order senders write them makes the lookup one comparison.
func (r *Reader) Object(names []string, fn func(k int) bool) (seen uint64, ok bool) {
	next := 0 // where the next name most likely is: senders keep one order
	if !r.eat('{') {
		return 0, false
	}
	if r.eat('}') {
		return 0, true
	}
	for {
		if r.peek() != '"' {
			return 0, false
		}
		name, escaped, ok := r.rawString()
		if !ok || escaped || !r.eat(':') {
			return 0, false
		}
		k := -1
		if names != nil {
			if k = index(names, name, next); k < 0 || seen&(1<<k) != 0 {
				return 0, false
			}
			seen |= 1 << k
			next = k + 1
		}
		if !fn(k) {
			return 0, false
		}
		if r.eat(',') {
			continue
		}
		return seen, r.eat('}')
	}
}

// index returns the position of name in names, searching from names[from]
// on and then from the start, or -1.
func index(names []string, name string, from int) int {
	if from > len(names) {
		from = len(names)
	}
	if k := slices.Index(names[from:], name); k >= 0 {
		return from + k
	}
	return slices.Index(names[:from], name)
}

// Array calls fn for each element of an array; fn must consume it.
func (r *Reader) Array(fn func() bool) bool {
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
func (r *Reader) rawString() (string, bool, bool) {
	start := r.i + 1
	escaped := false
	for i := start; i < len(r.b); i++ {
		i = plainUntil(r.b, i, false)
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
func (r *Reader) str() (string, bool) {
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
	return Unescape(raw)
}

// number reads a number literal, checked against JSON's grammar.
func (r *Reader) number() (string, bool) {
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
func (r *Reader) float32() (float32, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 32)
	return float32(f), err == nil
}

// float64 reads a number into an f64, as encoding/json does.
func (r *Reader) float64() (float64, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	return f, err == nil
}

// uint32 reads a number into a u32; a fraction, exponent, sign or
// overflow is declined.
func (r *Reader) uint32() (uint32, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(lit, 10, 32)
	return uint32(n), err == nil
}

// int reads a number into an int; a fraction or exponent is declined.
func (r *Reader) int() (int, bool) {
	lit, ok := r.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(lit, 10, strconv.IntSize)
	return int(n), err == nil
}

// bool reads true or false.
func (r *Reader) bool() (bool, bool) {
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
func (r *Reader) lit(w string) bool {
	if len(r.s)-r.i >= len(w) && r.s[r.i:r.i+len(w)] == w {
		r.i += len(w)
		return true
	}
	return false
}

// raw delimits one value of any type and returns its bytes, for
// encoding/json to decode.
func (r *Reader) raw() ([]byte, bool) {
	r.ws()
	start := r.i
	if !r.skip(0) {
		return nil, false
	}
	return r.b[start:r.i], true
}

// skip consumes one value, checking its syntax.
func (r *Reader) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch r.peek() {
	case '{':
		_, ok := r.Object(nil, func(int) bool { return r.skip(depth + 1) })
		return ok
	case '[':
		return r.Array(func() bool { return r.skip(depth + 1) })
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
