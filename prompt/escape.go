package prompt

import (
	"io"
	"strings"

	"github.com/ctxkit/ctxkit/internal/fence"
)

// tagName is the name of an untrusted block's tags. Content is escaped when
// an opener is followed by a case-insensitive prefix match of this name.
const tagName = "untrusted"

// tagScanner finds the openers that start an untrusted tag. It is package
// internal/fence's scanner, the one compose uses for its fences, with the
// same look-alike table. A backslash is not a slash to it: the breaker this
// escaping inserts is a backslash. It is immutable.
var tagScanner = fence.MustNew(tagName, fence.Options{})

// escapeTo writes content to w with a backslash (fence.Token.Breaker: two
// after a JSON escape of "<") inserted right after every opener that
// starts an untrusted tag ("</untrusted" becomes "<\/untrusted",
// "&lt;untrusted" becomes "&lt;\untrusted"). Nothing is deleted, and
// nothing replaced but invalid UTF-8, each byte of which is written as
// U+FFFD (fence.AppendValid says why), so valid text survives byte for
// byte around the breakers.
//
// Which openers start a tag is package internal/fence's rule: an opener is
// "<", a look-alike of it, a character reference to either (in any
// compatibility spelling) or a JSON or percent escape of it; then, after any
// run of whitespace, slashes and invisible characters, the runes spell
// "untrusted" as a prefix, letter by letter, through compatibility forms
// (the newest Unicode version's NFKC), case and visual look-alikes, with
// invisible characters ignored. Because the breaker survives every view,
// the tag stays broken for a reader who normalises, strips invisible
// characters or decodes references, in any order.
//
// The cost is linear in len(content).
func escapeTo(w sink, content string) error {
	start := 0
	var buf []byte // the escaped text not yet written, once a token is found
	var err error
	tagScanner.Scan(content, func(t fence.Token) {
		if err != nil {
			return
		}
		brk := t.Breaker()
		seg := content[start:t.End]
		start = t.End
		if len(buf)+len(seg)+len(brk) > cap(buf) {
			// Dense tokens would cost two writes each: batch them.
			if buf == nil {
				buf = make([]byte, 0, escapeChunk)
			}
			if err = flush(w, &buf); err != nil {
				return
			}
			if len(seg) > cap(buf)/2 {
				if err = fence.WriteValid(w, seg); err != nil {
					return
				}
				seg = ""
			}
		}
		buf = fence.AppendValid(buf, seg)
		buf = append(buf, brk...)
	})
	if err != nil {
		return err
	}
	if err := flush(w, &buf); err != nil {
		return err
	}
	return fence.WriteValid(w, content[start:])
}

// escapeChunk is the size of escapeTo's batch of escaped text.
const escapeChunk = 32 << 10

// sink is what escapeTo writes to.
type sink interface {
	io.Writer
	io.StringWriter
}

// flush writes *buf to w and empties it.
func flush(w sink, buf *[]byte) error {
	if len(*buf) == 0 {
		return nil
	}
	_, err := w.Write(*buf)
	*buf = (*buf)[:0]
	return err
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

// blankRune reports whether r shows nothing: whitespace or a rune the
// scanner skips as invisible.
func blankRune(r rune) bool {
	f, _ := fence.Fold(r)
	return f == "" || f == " "
}
