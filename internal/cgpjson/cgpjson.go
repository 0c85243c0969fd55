// Package cgpjson writes JSON exactly as the CGP reference serializer does:
// compact, members in the order the caller writes them, strings escaped only
// where JSON requires it (no HTML escaping, no escaping of U+2028/U+2029),
// and f32 numbers in their shortest round-trip form with ".0" kept on
// integral values.
package cgpjson

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// errNonFinite is returned for a NaN or infinite number, which JSON cannot hold.
var errNonFinite = errors.New("cgpjson: number is NaN or infinite")

// W appends one JSON value to B. Writing goes on after a failure, but B is
// then not valid JSON; Err holds the first failure.
type W struct {
	// B is the output buffer; the writer appends to it, so it may start
	// with bytes of the caller's (nil starts empty).
	B []byte
	// Err is the first failure (a NaN or infinite number);
	// nil while every write succeeded. When it is set, discard B.
	Err error
	sep bool // a value was written at this level, so the next one needs a comma
}

// Open starts an object.
func (w *W) Open() { w.B = append(w.B, '{'); w.sep = false }

// Close ends an object.
func (w *W) Close() { w.B = append(w.B, '}'); w.sep = true }

// OpenArray starts an array.
func (w *W) OpenArray() { w.B = append(w.B, '['); w.sep = false }

// CloseArray ends an array.
func (w *W) CloseArray() { w.B = append(w.B, ']'); w.sep = true }

// Elem starts the next array element.
func (w *W) Elem() {
	if w.sep {
		w.B = append(w.B, ',')
	}
	w.sep = true
}

// Key starts the member named k (k must need no escaping).
func (w *W) Key(k string) {
	if w.sep {
		w.B = append(w.B, ',')
	}
	w.B = append(w.B, '"')
	w.B = append(w.B, k...)
	w.B = append(w.B, '"', ':')
	w.sep = true
}

// Str writes member k with string value v.
func (w *W) Str(k, v string) { w.Key(k); w.B = appendString(w.B, v) }

// OptStr writes member k unless v is empty.
func (w *W) OptStr(k, v string) {
	if v != "" {
		w.Str(k, v)
	}
}

// Bool writes member k with boolean value v.
func (w *W) Bool(k string, v bool) { w.Key(k); w.B = strconv.AppendBool(w.B, v) }

// Uint writes member k with unsigned integer value v.
func (w *W) Uint(k string, v uint64) { w.Key(k); w.B = strconv.AppendUint(w.B, v, 10) }

// OptUint writes member k unless v is nil.
func (w *W) OptUint(k string, v *uint32) {
	if v != nil {
		w.Uint(k, uint64(*v))
	}
}

// F32 writes member k with f32 value v.
func (w *W) F32(k string, v float32) {
	w.Key(k)
	w.f32(v)
}

func (w *W) f32(v float32) {
	var err error
	w.B, err = appendF32(w.B, v)
	if err != nil && w.Err == nil {
		w.Err = err
	}
}

// F32s writes member k with an array of f32 values.
func (w *W) F32s(k string, vs []float32) {
	w.Key(k)
	w.OpenArray()
	for _, v := range vs {
		w.Elem()
		w.f32(v)
	}
	w.CloseArray()
}

// Strs writes member k with an array of strings.
func Strs[S ~string](w *W, k string, vs []S) {
	w.Key(k)
	w.OpenArray()
	for _, v := range vs {
		w.Elem()
		w.B = appendString(w.B, string(v))
	}
	w.CloseArray()
}

// OptStrs writes member k unless vs is empty.
func OptStrs[S ~string](w *W, k string, vs []S) {
	if len(vs) > 0 {
		Strs(w, k, vs)
	}
}

// Marshal returns what write writes to an empty W, with the W's Err: the
// body of the MarshalJSON of every type that encodes itself through a write
// method.
func Marshal(write func(*W)) ([]byte, error) {
	var w W
	write(&w)
	return w.B, w.Err
}

// Raw appends already-encoded JSON as the current value.
func (w *W) Raw(b []byte) { w.B = append(w.B, b...) }

const hexDigits = "0123456789abcdef"

// shortEscapes holds the letter of each two-character escape the reference
// serializer writes ("\n" for a newline ...), indexed by the byte it
// escapes; 0 means the byte is written as \u00XX.
var shortEscapes = [...]byte{'"': '"', '\\': '\\', '\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r'}

// appendString appends s as a JSON string. It escapes '"', '\\' and the
// control characters below U+0020 (\b \t \n \f \r short, others \u00xx) and
// writes everything else as UTF-8. Invalid UTF-8 becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		i = plainUntil(s, i, true)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if e := shortEscapes[c]; e != 0 {
				dst = append(dst, '\\', e)
			} else {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendF32 appends v as the reference serializer writes an f32: the
// shortest digits that read back as v; plain decimal notation when the
// decimal exponent allows, with ".0" on integral values (1.0, 12.0, 0.0);
// otherwise scientific notation without a plus sign (1e-7, 1.5e20).
func appendF32(dst []byte, v float32) ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, errNonFinite
	}
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, '0', '.', '0'), nil
	}
	// Shortest digits and decimal exponent: "d.ddde±x".
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 32)
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			x, _ := strconv.Atoi(string(e[i+1:]))
			exp = x
			break
		}
	}
	var digits [16]byte
	nd := 0
	for _, c := range mant {
		if c != '.' {
			digits[nd] = c
			nd++
		}
	}
	// value = digits × 10^k with k = exp - (nd-1); kk is the position of the
	// decimal point: 10^(kk-1) <= value < 10^kk.
	k := exp - (nd - 1)
	kk := nd + k
	switch {
	case k >= 0 && kk <= 13:
		dst = append(dst, digits[:nd]...)
		for i := nd; i < kk; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, '.', '0')
	case kk > 0 && kk <= 13:
		dst = append(dst, digits[:kk]...)
		dst = append(dst, '.')
		dst = append(dst, digits[kk:nd]...)
	case kk > -6 && kk <= 0:
		dst = append(dst, '0', '.')
		for i := kk; i < 0; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits[:nd]...)
	default:
		dst = append(dst, digits[0])
		if nd > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:nd]...)
		}
		dst = append(dst, 'e')
		dst = strconv.AppendInt(dst, int64(kk-1), 10)
	}
	return dst, nil
}
