package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
)

// UntrustedContent is the sealed set of types [Prompt.Untrusted] accepts:
// [External] (text from a third party, as a string) and [AgentText] (text an
// agent wrote).
//
// The set is sealed by an unexported method: no type outside this package
// can implement it, and the interface gives no way to read the text. A type
// that embeds an External or an AgentText satisfies it through the embedded
// value and quotes exactly that value's text.
//
// Go attaches no methods to the built-in string type, so a plain string
// enters a prompt as untrusted content through the conversion
// External(s), which costs nothing at run time.
type UntrustedContent interface {
	untrustedText() string
}

// External is text the workflow did not write: an issue body, a review
// comment, a CI log, a webhook payload. Convert a string to External to
// quote it with [Prompt.Untrusted].
type External string

func (e External) untrustedText() string { return string(e) }

// AgentText is text an agent produced: its free-text answer, or a text field
// of a structured answer. An agent may repeat, word for word, instructions
// planted in what it read, so its text reaches a prompt only inside an
// untrusted block, through [Prompt.Untrusted].
//
// AgentText is a struct, not a string type, so that nothing turns it into
// trusted text by accident:
//   - [Prompt.Text] does not accept it, and neither string(t) nor
//     External(t) compiles;
//   - it has no String method, so it is no [fmt.Stringer];
//   - every fmt verb (%v %s %q %x %+v %#v ...) prints "AgentText(<N bytes>)",
//     with N the length in UTF-8 bytes, never the text; so does printing a
//     struct, slice or map that holds it. (fmt cannot call methods through
//     an unexported struct field: such a field prints as an opaque pointer,
//     since the text sits behind a pointer fmt does not follow at depth);
//   - log/slog logs the same placeholder (see [AgentText.LogValue]);
//   - it is not comparable with ==; use [AgentText.Equal].
//
// JSON encodes and decodes it as a plain string, so a structured answer
// holding AgentText fields has the same wire form as one holding strings.
//
// [AgentText.Raw] is the explicit escape hatch, for logs, artifacts, shell
// arguments or comments. Never put its result in a prompt: pass the
// AgentText itself to [Prompt.Untrusted].
//
// The zero value is the empty text.
type AgentText struct {
	_    [0]func() // makes the type incomparable: == would compare pointers
	text *string
}

// NewAgentText wraps text an agent produced.
func NewAgentText(text string) AgentText {
	return AgentText{text: &text}
}

// Raw returns the text itself, for logs, artifacts, shell arguments or
// comments. Never pass it to a prompt: quote the AgentText with
// [Prompt.Untrusted].
func (t AgentText) Raw() string {
	if t.text == nil {
		return ""
	}
	return *t.text
}

// len returns the length of the text in bytes.
func (t AgentText) len() int { return len(t.Raw()) }

// Equal reports whether t and u hold the same text.
func (t AgentText) Equal(u AgentText) bool { return t.Raw() == u.Raw() }

// Format implements [fmt.Formatter]: whatever the verb and flags, it prints
// "AgentText(<N bytes>)" and never the text.
func (t AgentText) Format(f fmt.State, _ rune) {
	fmt.Fprint(f, t.placeholder())
}

// LogValue implements [slog.LogValuer] so that structured logs show the
// placeholder, not the text. Log [AgentText.Raw] explicitly to record it.
func (t AgentText) LogValue() slog.Value {
	return slog.StringValue(t.placeholder())
}

func (t AgentText) placeholder() string {
	return fmt.Sprintf("AgentText(<%d bytes>)", t.len())
}

// MarshalJSON encodes the text as a JSON string.
func (t AgentText) MarshalJSON() ([]byte, error) {
	return json.Marshal(t.Raw())
}

// UnmarshalJSON decodes a JSON string. Like for a string, JSON null leaves
// the value unchanged.
func (t *AgentText) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("prompt: decode AgentText: %w", err)
	}
	t.text = &s
	return nil
}

func (t AgentText) untrustedText() string { return t.Raw() }
