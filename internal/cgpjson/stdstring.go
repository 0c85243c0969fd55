package cgpjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// AppendStdString appends s byte for byte as encoding/json encodes a string
// with HTML escaping off (the text is for a model, and "<" as \u003c costs
// it six bytes). It is appendString on the common path; encoding/json also
// escapes U+2028 and U+2029 and writes invalid UTF-8 as the escape \ufffd,
// so a string holding any of these goes through encoding/json itself.
func AppendStdString(dst []byte, s string) []byte {
	if utf8.ValidString(s) && !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029") {
		return appendString(dst, s)
	}
	b, _ := MarshalNoEscape(s) // a string always encodes
	return append(dst, b...)
}

// MarshalNoEscape is json.Marshal with HTML escaping off: "<", ">" and "&"
// stay as they are (the text is for a model, or for a terminal).
func MarshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
