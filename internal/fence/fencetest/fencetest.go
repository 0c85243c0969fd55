// Package fencetest is the reader's side of the fence property, for tests:
// the views a reader may apply to a prompt (NFKC of the newest Unicode
// version, Cf stripping, Go's and Python's HTML decoding, and their
// compositions), a token counter that knows nothing of the scanner, and
// payload generators for every class of fence-like text.
//
// It is written independently of package fence: a view here is what a
// reader's tool does, not what the scanner expects it to do.
package fencetest

import (
	"html"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// View is one way of reading a text.
type View struct {
	Name string
	Fn   func(string) string
}

// foldNFKC normalises s as an NFKC implementation of Unicode newerVersion
// would: golang.org/x/text's NFKC, with the decompositions it does not know
// yet applied, then NFKC again (a no-op unless they recompose).
func foldNFKC(s string) string {
	s = norm.NFKC.String(s)
	if !hasNewer(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if d, ok := newerDecompositions[r]; ok {
			b.WriteString(d)
		} else {
			b.WriteRune(r)
		}
	}
	return norm.NFKC.String(b.String())
}

func hasNewer(s string) bool {
	for _, r := range s {
		if _, ok := newerDecompositions[r]; ok {
			return true
		}
	}
	return false
}

// DropCf removes the format characters (general category Cf), as a
// decoder that ignores them reads the text. It works on the bytes, as sed
// or a byte-level replace would: invalid UTF-8 is kept as it is, so what
// stood on either side of a deleted character meets (and may now read as
// one character).
func DropCf(s string) string {
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if w > 1 && unicode.Is(unicode.Cf, r) || r < utf8.RuneSelf && unicode.Is(unicode.Cf, r) {
			b.WriteString(s[start:i])
			start = i + w
		}
		i += w
	}
	if start == 0 {
		return s
	}
	b.WriteString(s[start:])
	return b.String()
}

// pyUnescape decodes HTML character references as Python's html.unescape
// does (Python 3.4 and later): numeric references to noncharacters, to DEL
// and to most C0 controls are deleted, C1 values take their HTML5
// Windows-1252 meaning (or stay themselves), a value past U+10FFFF or a surrogate is U+FFFD, and a
// named reference is looked up as the longest known prefix of up to 32
// characters (named lookups are delegated to Go's table, the same HTML5
// list).
func pyUnescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '&' {
			j := strings.IndexByte(s[i:], '&')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(s[i : i+j])
			i += j
			continue
		}
		text, n := pyRef(s[i+1:])
		if n == 0 {
			b.WriteByte('&')
			i++
			continue
		}
		b.WriteString(text)
		i += 1 + n
	}
	return b.String()
}

// pyRef decodes the reference after an '&' (Python's regular expression
// &(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)).
func pyRef(s string) (string, int) {
	if strings.HasPrefix(s, "#") {
		j, base := 1, 10
		if len(s) > 1 && (s[1] == 'x' || s[1] == 'X') {
			j, base = 2, 16
		}
		k := j
		for k < len(s) && isDigit(s[k], base) {
			k++
		}
		if k == j {
			return "", 0
		}
		digits := s[j:k]
		if k < len(s) && s[k] == ';' {
			k++
		}
		v, err := strconv.ParseUint(digits, base, 64)
		if err != nil || v > unicode.MaxRune {
			return "\uFFFD", k
		}
		return pyCharref(rune(v)), k
	}
	// Named references: HTML5 names are alphanumeric, and Python's
	// longest-prefix lookup agrees with Go's on them.
	k := 0
	for k < len(s) && (unicode.IsLetter(rune(s[k])) || unicode.IsDigit(rune(s[k]))) && s[k] < utf8.RuneSelf {
		k++
	}
	if k == 0 {
		return "", 0
	}
	name := s[:k]
	if k < len(s) && s[k] == ';' {
		name = s[:k+1]
	}
	out := html.UnescapeString("&" + name)
	if out == "&"+name {
		return "", 0
	}
	return out, len(name)
}

// pyCharref is Python's _replace_charref for a numeric value v.
func pyCharref(v rune) string {
	if 0x80 <= v && v <= 0x9F || v == 0 || v == 0x0D {
		if v == 0 {
			return "\uFFFD"
		}
		if v == 0x0D {
			return "\r"
		}
		return html.UnescapeString("&#" + strconv.Itoa(int(v)) + ";")
	}
	if 0xD800 <= v && v <= 0xDFFF {
		return "\uFFFD"
	}
	switch {
	case 0x01 <= v && v <= 0x08, v == 0x0B, 0x0E <= v && v <= 0x1F, v == 0x7F,
		0xFDD0 <= v && v <= 0xFDEF, v&0xFFFE == 0xFFFE:
		return ""
	}
	return string(v)
}

func isDigit(c byte, base int) bool {
	if '0' <= c && c <= '9' {
		return true
	}
	return base == 16 && ('a' <= c|0x20 && c|0x20 <= 'f')
}

// Single views.
var (
	raw    = View{"raw", func(s string) string { return s }}
	nfkc   = View{"nfkc", foldNFKC}
	noCf   = View{"no-cf", DropCf}
	goHTML = View{"html", html.UnescapeString}
	pyHTML = View{"py-html", pyUnescape}
)

// compose returns the view that applies vs in order.
func compose(vs ...View) View {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return View{strings.Join(names, "+"), func(s string) string {
		for _, v := range vs {
			s = v.Fn(s)
		}
		return s
	}}
}

// Views returns raw, each single view, and every composition of two or
// three distinct views in either order (never both HTML decoders), with
// decoders or without (decoders false: the views of a text whose escaping is
// itself HTML references, like package prompt's).
func Views(decoders bool) []View {
	singles := []View{nfkc, noCf}
	if decoders {
		singles = append(singles, goHTML, pyHTML)
	}
	out := []View{raw}
	var walk func(prefix []View, used map[string]bool)
	walk = func(prefix []View, used map[string]bool) {
		if len(prefix) > 0 {
			out = append(out, compose(prefix...))
		}
		if len(prefix) == 3 {
			return
		}
		for _, v := range singles {
			if used[v.Name] || (v.Name == "html" && used["py-html"]) || (v.Name == "py-html" && used["html"]) {
				continue
			}
			used[v.Name] = true
			walk(append(prefix[:len(prefix):len(prefix)], v), used)
			delete(used, v.Name)
		}
	}
	walk(nil, map[string]bool{})
	if decoders {
		// A reader who drops U+FFFD after decoding (what a decoder makes
		// of a number past every code point, or of "&#x;").
		for _, v := range out {
			if strings.Contains(v.Name, "html") {
				out = append(out, compose(v, noFFFD))
			}
		}
	}
	return out
}

// noFFFD drops every U+FFFD.
var noFFFD = View{"no-fffd", func(s string) string { return strings.ReplaceAll(s, "\uFFFD", "") }}

// token is one fence token a reader sees.
type token struct {
	Pos   int
	Close bool
}

// pyExtraSpace reports the controls U+001C–U+001F, which Python's
// str.isspace (and so its regular expressions' \s) counts as whitespace
// and Go's unicode.IsSpace does not.
func pyExtraSpace(r rune) bool { return 0x1C <= r && r <= 0x1F }

// Tokens finds the fence tokens of name (lower-case ASCII) in s, the
// reader's definition: '<', then any run of Unicode whitespace (Go's or
// Python's) and '/', then name matched case-insensitively (simple case
// folding) as a prefix.
// A token whose run holds a '/' is a closing one.
func Tokens(s, name string) []token {
	var out []token
	for i := 0; i < len(s); i++ {
		if s[i] != '<' {
			continue
		}
		j := i + 1
		slash := false
		for j < len(s) {
			r, w := utf8.DecodeRuneInString(s[j:])
			if r == '/' {
				slash = true
			} else if !unicode.IsSpace(r) && !pyExtraSpace(r) {
				break
			}
			j += w
		}
		k, n := j, 0
		for n < len(name) && k < len(s) {
			r, w := utf8.DecodeRuneInString(s[k:])
			if !strings.EqualFold(string(r), name[n:n+1]) {
				break
			}
			n++
			k += w
		}
		if n == len(name) {
			out = append(out, token{Pos: i, Close: slash})
		}
	}
	return out
}
