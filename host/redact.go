package host

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/wire"
)

// errCredentialEchoed: a provider's reply carried a credential the host
// holds for it (C8); the reply is discarded rather than passed on.
var errCredentialEchoed = errors.New("reply echoes the provider's credential")

// minSecret is the shortest credential value scrubbed: a shorter one would
// match ordinary text (and is no secret worth the name).
const minSecret = 4

// secrets are the credential values configured for one provider (its bearer
// token, the values of its secret environment entries). Everything the host
// derives from what that provider sent (error messages, stderr, replies) is
// scrubbed of them before anyone can print it (C8).
type secrets []string

// secretsOf returns the scrubbable values of creds.
func secretsOf(creds ...Credential) secrets {
	var s secrets
	for _, c := range creds {
		if v := c.value(); len(v) >= minSecret {
			s = append(s, v)
		}
	}
	return s
}

// credentialed is implemented by transports that hold credentials.
type credentialed interface{ secrets() secrets }

func secretsOfProvider(p provider) secrets {
	if c, ok := p.(credentialed); ok {
		return c.secrets()
	}
	return nil
}

// in reports whether str holds any secret, in any spelling of spellings
// or behind JSON escapes (escapedEcho).
func (s secrets) in(str string) bool {
	return s.spelledIn(str) || s.escapedEcho(str)
}

func (s secrets) spelledIn(str string) bool {
	for _, v := range s {
		for _, form := range spellings(v) {
			if strings.Contains(str, form) {
				return true
			}
		}
	}
	return false
}

// scrubString replaces every secret in str, in any spelling of spellings,
// with the redacted form. A text that still holds one behind JSON escapes
// (a provider's JSON error body writing it "\u005a…" or with "\/") is
// withheld whole: where the escapes hide it cannot be cut out.
func (s secrets) scrubString(str string) string {
	for _, v := range s {
		for _, form := range spellings(v) {
			if strings.Contains(str, form) {
				str = strings.ReplaceAll(str, form, redacted)
			}
		}
	}
	if s.escapedEcho(str) {
		return withheld
	}
	return str
}

// withheld replaces a provider's text that spells a credential behind
// escapes.
const withheld = "[provider text withheld: it holds a credential behind escapes]"

// escapedEcho reports whether str, read as the text of a JSON string (one
// level of backslash escapes undone, or two: JSON quoted again for
// printing), holds a secret.
func (s secrets) escapedEcho(str string) bool {
	for range 2 {
		if len(s) == 0 || !strings.Contains(str, `\`) {
			return false
		}
		str = unescapeLoose(str)
		if s.spelledIn(str) {
			return true
		}
	}
	return false
}

// unescapeLoose undoes the JSON escapes in text (\uXXXX with surrogate
// pairs, \/ and the short ones), leaving any other backslash as it is.
func unescapeLoose(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' || i+1 == len(text) {
			b.WriteByte(c)
			continue
		}
		if r, n := escapedRune(text[i+1:]); n > 0 {
			b.WriteRune(r)
			i += n
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// escapedRune decodes the escape after a backslash at the start of e: the
// rune and the bytes it takes (0: no escape).
func escapedRune(e string) (rune, int) {
	if short := strings.IndexByte(`"\/bfnrt`, e[0]); short >= 0 {
		return rune("\"\\/\b\f\n\r\t"[short]), 1
	}
	if e[0] != 'u' || len(e) < 5 {
		return 0, 0
	}
	r, err := strconv.ParseUint(e[1:5], 16, 16)
	if err != nil {
		return 0, 0
	}
	if utf16.IsSurrogate(rune(r)) && len(e) >= 11 && e[5] == '\\' && e[6] == 'u' {
		if lo, err := strconv.ParseUint(e[7:11], 16, 16); err == nil {
			if pair := utf16.DecodeRune(rune(r), rune(lo)); pair != utf8.RuneError {
				return pair, 11
			}
		}
	}
	return rune(r), 5
}

// spellings are the ways a secret appears in text that quotes what a
// provider wrote: as it is, inside a Go-quoted string (safetext.Quote,
// strconv.Quote: '"' as \", a tab as \t) and as safetext.Escape writes it.
// Each escapes rune by rune, so the secret's spelling inside a quoted text
// is the quoted secret's.
func spellings(v string) []string {
	out := []string{v}
	q := strconv.Quote(v)
	for _, form := range []string{q[1 : len(q)-1], safetext.Escape(v)} {
		if !slices.Contains(out, form) {
			out = append(out, form)
		}
	}
	return out
}

// scrubTail is scrubString for a buffer that may have lost its beginning:
// a secret cut by that loss leaves its end at the start, which is
// redacted too.
func (s secrets) scrubTail(str string) string {
	str = s.scrubString(str)
	for _, v := range s {
		for n := len(v) - 1; n >= minSecret; n-- {
			if strings.HasPrefix(str, v[len(v)-n:]) {
				str = redacted + str[n:]
				break
			}
		}
	}
	return str
}

// scrubError returns err with every secret removed from its text, keeping
// the error's kind (errors.Is) and the host's own error types.
func (s secrets) scrubError(err error) error {
	if err == nil || len(s) == 0 || !s.in(err.Error()) {
		return err
	}
	switch e := err.(type) {
	case *Error:
		c := *e
		c.Detail = s.scrubString(c.Detail)
		c.Err = s.scrubError(c.Err)
		return &c
	case *wire.Error:
		c := *e
		c.ID = s.scrubString(c.ID)
		c.Code = wire.Code(s.scrubString(string(c.Code)))
		c.Message = s.scrubString(c.Message)
		return &c
	case *VersionMismatchError:
		c := *e
		c.ProviderName = s.scrubString(c.ProviderName)
		c.ProviderVersion = s.scrubString(c.ProviderVersion)
		return &c
	case *correlationError:
		c := *e
		c.Got = s.scrubString(c.Got)
		return &c
	}
	// Any other error keeps its kind but not its chain: unwrapping would
	// hand the unscrubbed original back.
	return &scrubbedError{msg: s.scrubString(err.Error()), cause: err}
}

// scrubbedError is an error whose text had a secret removed.
type scrubbedError struct {
	msg   string
	cause error
}

func (e *scrubbedError) Error() string { return e.msg }

// Is matches what the original error matched.
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.cause, target) }

// echoed reports whether a reply (its raw bytes, and env decoded from them)
// carries a secret. Inside a JSON string a secret holding '"', '\\' or a
// control character is spelled escaped, so each secret is looked for both
// as it is and as ctxkit's encoder spells it. A reply may also spell any
// character as \uXXXX or '/' as \/; when the raw bytes hold either escape
// the decoded envelope is encoded again, canonically, and searched too.
func (s secrets) echoed(raw []byte, env wire.Envelope) bool {
	if len(s) == 0 {
		return false
	}
	if s.inJSON(raw) {
		return true
	}
	if env == nil || (!bytes.Contains(raw, []byte(`\u`)) && !bytes.Contains(raw, []byte(`\/`))) {
		return false
	}
	canon, err := encodeEnvelope(env)
	if err != nil {
		return true // cannot be checked: treat as echoed, fail closed
	}
	return s.inJSON(canon)
}

// inJSON reports whether b holds a secret as it is or in the spelling
// ctxkit's JSON encoder gives it inside a string (the only spelling a
// reply without \u or \/ escapes can use).
func (s secrets) inJSON(b []byte) bool {
	for _, v := range s {
		if bytes.Contains(b, []byte(v)) {
			return true
		}
		q := cgpjson.AppendStdString(nil, v)
		if esc := q[1 : len(q)-1]; len(esc) != len(v) && bytes.Contains(b, esc) {
			return true
		}
	}
	return false
}

// ScrubError returns err with every one of values (credentials: a
// password, a token) removed from its text, keeping the error's kind for
// errors.Is. Values shorter than four bytes are not scrubbed (they would
// match ordinary text). Use it on an error about to be printed or logged
// that may quote a credential (C8).
func ScrubError(err error, values ...string) error {
	var s secrets
	for _, v := range values {
		if len(v) >= minSecret {
			s = append(s, v)
		}
	}
	return s.scrubError(err)
}
