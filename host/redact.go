package host

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"strings"

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
// token, the values of its secret environment entries), each with the other
// spellings it takes in what the host prints or reads (see newSecrets).
// Everything the host derives from what that provider sent (error
// messages, stderr, replies) is scrubbed of them before anyone can print it
// (C8).
type secrets []string

// secretsOf returns the scrubbable values of creds.
func secretsOf(creds ...Credential) secrets {
	values := make([]string, len(creds))
	for i, c := range creds {
		values[i] = c.value()
	}
	return newSecrets(values...)
}

// newSecrets returns values of at least minSecret bytes with their other
// spellings: inside a Go-quoted string (safetext.Quote, strconv.Quote: '"'
// as \", a tab as \t), as safetext.Escape writes it, and inside a JSON
// string as ctxkit's encoder writes it. Each escapes rune by rune, so a
// secret's spelling inside a quoted text is the quoted secret's.
func newSecrets(values ...string) secrets {
	var s secrets
	for _, v := range values {
		if len(v) < minSecret {
			continue
		}
		q, j := strconv.Quote(v), cgpjson.AppendStdString(nil, v)
		for _, form := range []string{v, q[1 : len(q)-1], safetext.Escape(v), string(j[1 : len(j)-1])} {
			if !slices.Contains(s, form) {
				s = append(s, form)
			}
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

// in reports whether str holds any secret, spelled out or behind JSON
// escapes (escapedEcho).
func (s secrets) in(str string) bool {
	return s.spelledIn(str) || s.escapedEcho(str)
}

func (s secrets) spelledIn(str string) bool {
	for _, v := range s {
		if strings.Contains(str, v) {
			return true
		}
	}
	return false
}

// scrubString replaces every secret in str, in each of its spellings, with
// the redacted form. A text that still holds one behind JSON escapes
// (a provider's JSON error body writing it "\u005a…" or with "\/") is
// withheld whole: where the escapes hide it cannot be cut out.
func (s secrets) scrubString(str string) string {
	for _, v := range s {
		if strings.Contains(str, v) {
			str = strings.ReplaceAll(str, v, redacted)
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
		str = cgpjson.UnescapeLoose(str)
		if s.spelledIn(str) {
			return true
		}
	}
	return false
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
// carries a secret, as it is or as a JSON string spells it (newSecrets:
// '"', '\\' and control characters escaped). A reply may also spell any
// character as \uXXXX or '/' as \/; when the raw bytes hold either escape
// the decoded envelope is encoded again, canonically, and searched too.
func (s secrets) echoed(raw []byte, env wire.Envelope) bool {
	if len(s) == 0 {
		return false
	}
	if s.inBytes(raw) {
		return true
	}
	if env == nil || (!bytes.Contains(raw, []byte(`\u`)) && !bytes.Contains(raw, []byte(`\/`))) {
		return false
	}
	canon, err := encodeEnvelope(env)
	if err != nil {
		return true // cannot be checked: treat as echoed, fail closed
	}
	return s.inBytes(canon)
}

// inBytes is spelledIn for a reply's bytes.
func (s secrets) inBytes(b []byte) bool {
	for _, v := range s {
		if bytes.Contains(b, []byte(v)) {
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
	return newSecrets(values...).scrubError(err)
}
