package prompt

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/fence"
)

// tagName is the name of an untrusted block's tags. Content is escaped when
// an opener is followed by a case-insensitive prefix match of this name.
const tagName = "untrusted"

// tagScanner finds the openers that start an untrusted tag. It is package
// internal/fence's scanner, the one compose uses for its fences, with the
// same look-alike table; a backslash counts as a slash ("<\/untrusted"),
// since the escaping here replaces the opener rather than inserting a
// backslash. It is immutable.
var tagScanner = fence.MustNew(tagName, fence.Options{BackslashIsSlash: true})

// escapeTo writes content to w with every opener that starts an untrusted
// tag replaced by an HTML character reference: the ASCII "<" becomes "&lt;"
// and a look-alike such as U+FF1C becomes "&#xFF1C;". Nothing else changes,
// so the text survives and a reader can still see what was written.
//
// Which openers start a tag is package internal/fence's rule: after any run
// of whitespace, slashes and invisible characters, the runes that follow
// spell "untrusted" as a prefix, letter by letter, through compatibility
// forms (the newest Unicode version's NFKC), case and visual look-alikes,
// with invisible characters ignored. An opener that is itself written as a
// character reference or an escape ("&lt;untrusted") is left as it is: a
// reader who decodes references also decodes this escaping's "&lt;", so
// against such a reader the nonce is the defence, not the escaping.
//
// The cost is linear in len(content).
func escapeTo(w io.StringWriter, content string) error {
	start := 0
	var err error
	tagScanner.Scan(content, func(t fence.Token) {
		if err != nil {
			return
		}
		switch t.Kind {
		case fence.Raw:
			err = writeAll(w, content[start:t.Start], "&lt;")
		case fence.LookAlike:
			r, _ := utf8.DecodeRuneInString(content[t.Start:])
			err = writeAll(w, content[start:t.Start], refOf(r))
		default:
			return
		}
		start = t.End
	})
	if err != nil {
		return err
	}
	_, err = w.WriteString(content[start:])
	return err
}

// refOf spells r as an upper-case hex character reference.
func refOf(r rune) string {
	var buf [16]byte
	ref := append(buf[:0], "&#x"...)
	ref = strconv.AppendUint(ref, uint64(r), 16)
	ref = append(ref, ';')
	upperHex(ref[3 : len(ref)-1])
	return string(ref)
}

// escape returns content escaped as escapeTo writes it.
func escape(content string) string {
	var b strings.Builder
	b.Grow(len(content))
	_ = escapeTo(&b, content) // a strings.Builder never fails
	return b.String()
}

func writeAll(w io.StringWriter, a, b string) error {
	if _, err := w.WriteString(a); err != nil {
		return err
	}
	_, err := w.WriteString(b)
	return err
}

func upperHex(b []byte) {
	for i, c := range b {
		if 'a' <= c && c <= 'f' {
			b[i] = c - 'a' + 'A'
		}
	}
}

// blankRune reports whether r shows nothing: whitespace or a rune the
// scanner skips as invisible.
func blankRune(r rune) bool {
	f, _ := fence.Fold(r)
	return f == "" || f == " "
}
