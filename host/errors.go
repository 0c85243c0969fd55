package host

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/wire"
)

// Error kinds. Every error the host returns for a provider failure matches
// exactly one of them with errors.Is, except a version mismatch, which is a
// *VersionMismatchError (errors.As); the exported ones are those a caller
// acts on (retry later, fix the command, grant consent, stop using the
// host, refuse an insecure URL). The others name the kind in the error's
// text (and in the leg's Status); a provider's own error envelope is
// reachable with errors.As as *wire.Error.
var (
	// ErrProviderCrashed: the provider's process exited, its pipe closed, or
	// its connection was torn down while a request was outstanding.
	ErrProviderCrashed = errors.New("provider crashed")
	// ErrNotStarted: the provider's process could not be started (the
	// command does not exist or is not executable); nothing was sent.
	ErrNotStarted = errors.New("provider could not be started")
	// ErrTimeout: the provider did not answer within the host's deadline.
	ErrTimeout = errors.New("provider timed out")
	// errMalformed: the provider sent bytes that are not a CGP envelope
	// (undecodable JSON, an over-long line, an HTTP body that is not one).
	errMalformed = errors.New("malformed reply")
	// errUnexpectedEnvelope: a well-formed envelope of the wrong type.
	errUnexpectedEnvelope = errors.New("unexpected envelope")
	// errCorrelationMismatch: a correlating provider echoed the wrong id (H4).
	errCorrelationMismatch = errors.New("correlation id mismatch")
	// errVersionMismatch: the provider's protocol family differs (H1/H3).
	errVersionMismatch = errors.New("protocol version mismatch")
	// errHandshake: the handshake_ack breaks a rule the host checks (H2, C5,
	// representation/resolve consistency).
	errHandshake = errors.New("handshake rejected")
	// errProviderError: the provider answered with an error envelope.
	errProviderError = errors.New("provider error")
	// errUnauthorized: an HTTP provider answered 401.
	errUnauthorized = errors.New("unauthorized")
	// ErrInsecureTransport: plain http:// to a non-loopback host (C7).
	ErrInsecureTransport = errors.New("insecure transport refused")
	// errTransport: any other transport failure (HTTP status, dial, I/O).
	errTransport = errors.New("transport failure")
	// ErrConsentRequired: the provider needs consent the store does not hold
	// (C1, C2, C6); no payload was sent.
	ErrConsentRequired = errors.New("consent required")
	// errUnknownProvider: no provider is registered under that id.
	errUnknownProvider = errors.New("unknown provider")
	// ErrClosed: the host or the provider connection was closed.
	ErrClosed = errors.New("closed")
)

// Error is a provider failure: which provider, during which operation, of
// which kind (one of the sentinels above), with the underlying cause.
type Error struct {
	Provider string // host-side provider id
	Op       string // "handshake", "query", "verify", "shutdown", "spawn"
	Kind     error  // one of the Err* sentinels
	Detail   string // human detail, never a credential
	Err      error  // underlying cause, may be nil
}

// Error returns "host: OP \"PROVIDER\": KIND: DETAIL: CAUSE", leaving out
// the empty parts. A provider's error envelope is written as
// `provider error CODE: "MESSAGE"`, its message Go-quoted.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("host: ")
	b.WriteString(e.Op)
	if e.Provider != "" {
		fmt.Fprintf(&b, " %q", e.Provider)
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		var we *wire.Error
		if errors.As(e.Err, &we) {
			// The message is the provider's own text: quoted, it cannot
			// pass for the host's words or break the line.
			code := string(we.Code)
			if code == "" {
				code = string(wire.CodeInternal)
			}
			// The code is the provider's too (the vocabulary is open, X1):
			// bare only when it reads as one token.
			b.WriteString("provider error " + safetext.Quote(code) + ": " + strconv.Quote(we.Message))
		} else {
			b.WriteString(e.Err.Error())
		}
	}
	return b.String()
}

// Is reports whether target is the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

func newErr(provider, op string, kind error, detail string, cause error) *Error {
	return &Error{Provider: provider, Op: op, Kind: kind, Detail: detail, Err: cause}
}

// VersionMismatchError reports a provider whose protocol family differs from
// the host's (H1/H3).
type VersionMismatchError struct {
	Provider string // host-side id
	// HostVersion is the protocol_version the host sent in its handshake.
	HostVersion     string
	ProviderVersion string // the protocol_version the provider acknowledged
	ProviderName    string // provider.name from the ack, may be empty
}

// Error names both versions and the rule (H3).
func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("host: handshake %q: %v (H3): host speaks %q, provider %q acknowledged %q",
		e.Provider, errVersionMismatch, e.HostVersion, e.ProviderName, e.ProviderVersion)
}

// correlationError reports a reply whose correlation id does not match the
// request's (H4). Got is "<absent>" when the reply carried no id.
type correlationError struct {
	// Provider is the host's id for the provider that replied.
	Provider string
	// Expected is the id the host sent with the query.
	Expected string
	// Got is the id the reply carried, or "<absent>" when it had none.
	Got string
}

// Error names the expected and received ids and the rule (H4).
func (e *correlationError) Error() string {
	return fmt.Sprintf("host: query %q: %v (H4): expected id %q, got %q", e.Provider, errCorrelationMismatch, e.Expected, e.Got)
}

// Is matches errCorrelationMismatch.
func (e *correlationError) Is(target error) bool { return target == errCorrelationMismatch }

// ConsentError reports a provider the consent gate stopped (C1, C2, C6): no
// payload was sent (and, when BeforeConnect, no connection was opened).
// Missing names the scopes lacking a receipt; when it is empty the provider
// needs a legacy consent record. It matches ErrConsentRequired.
type ConsentError struct {
	// Provider is the host's id for the stopped provider.
	Provider string
	// Missing lists the egress scopes with no current receipt; empty when
	// a legacy consent record is what is missing.
	Missing []frame.EgressScope
	// Reason says why consent held for the id did not cover the provider
	// (expired, granted for another name or endpoint); empty when none was
	// held.
	Reason string
	// Endpoint is where the host reaches the provider ("" when unnamed).
	Endpoint string
	// Name is the name the provider announced ("" when it was stopped
	// before its handshake).
	Name string
	// BeforeConnect: the provider is egress whatever it declares (C4) and
	// was stopped before any connection to it was opened.
	BeforeConnect bool
}

// Error names the missing scopes (or the missing consent record), why held
// consent did not cover the provider, and the ctxkit command that grants it.
func (e *ConsentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "host: query %q: %v", e.Provider, ErrConsentRequired)
	switch {
	case e.BeforeConnect:
		fmt.Fprintf(&b, " (C4): provider at %q is off this machine and no consent covers it; no connection was opened", e.Endpoint)
	case len(e.Missing) == 0:
		b.WriteString(" (C1/C2): provider declares egress and no consent covering it is recorded")
	default:
		parts := make([]string, len(e.Missing))
		for i, m := range e.Missing {
			parts[i] = string(m)
		}
		fmt.Fprintf(&b, " (C6): no receipt covering it for egress scope(s) %s", strings.Join(parts, ", "))
	}
	if e.Reason != "" {
		b.WriteString(" (" + e.Reason + ")")
	}
	// The command is for pasting into a shell, and the scope and the name
	// are the provider's words: each argument is quoted for the shell.
	b.WriteString("; grant with: ctxkit consent grant " + shellWord(e.Provider, "ID"))
	if !e.BeforeConnect && len(e.Missing) > 0 {
		b.WriteString(" --scope " + shellWord(string(e.Missing[0]), "SCOPE"))
	}
	if e.Endpoint != "" {
		b.WriteString(" --endpoint " + shellWord(e.Endpoint, "ENDPOINT"))
	}
	b.WriteString(" --provider-name " + shellWord(e.Name, "ANNOUNCED-NAME"))
	b.WriteString(" --grantor NAME")
	return b.String()
}

// shellWord spells s as one POSIX shell word: bare when it holds only
// characters no shell treats specially, else in single quotes (a quote
// inside closes them, is escaped and reopens them), so that pasting the
// command runs nothing the provider wrote. A blank s, or one with a
// character that is not printable (which the printed line would show
// escaped, not as it is), is the placeholder.
func shellWord(s, placeholder string) string {
	if strings.TrimSpace(s) == "" || strings.IndexFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) >= 0 {
		return placeholder
	}
	if strings.IndexFunc(s, func(r rune) bool { return !shellSafe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe reports whether r needs no quoting in a POSIX shell word.
func shellSafe(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)
}

// Is matches ErrConsentRequired.
func (e *ConsentError) Is(target error) bool { return target == ErrConsentRequired }
