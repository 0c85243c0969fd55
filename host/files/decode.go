package files

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeText returns data as UTF-8 text, or ok false for binary data.
// UTF-8 is taken as it is; UTF-16 with a byte-order mark is decoded; bytes
// that are not valid UTF-8 but hold no control characters other than
// whitespace are read as Latin-1 (ISO 8859-1), each byte one character.
// Anything with a NUL byte or other control characters is binary.
func decodeText(data []byte) (text []byte, ok bool) {
	if len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF) {
		return decodeUTF16(data[2:], data[0] == 0xFE), true
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, false
	}
	if utf8.Valid(data) {
		return data, !hasControl(data)
	}
	if hasControl(data) {
		return nil, false
	}
	out := make([]byte, 0, len(data)+len(data)/8)
	for _, b := range data {
		out = utf8.AppendRune(out, rune(b))
	}
	return out, true
}

// hasControl reports C0 control characters other than tab, newline,
// vertical tab, form feed, carriage return and escape (used by ANSI colour
// codes in logs) in the first 8 KiB.
func hasControl(data []byte) bool {
	for _, b := range data[:min(len(data), 8192)] {
		if b < 0x20 && b != '\t' && b != '\n' && b != '\v' && b != '\f' && b != '\r' && b != 0x1b {
			return true
		}
	}
	return false
}

func decodeUTF16(b []byte, bigEndian bool) []byte {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if bigEndian {
			u = append(u, binary.BigEndian.Uint16(b[i:]))
		} else {
			u = append(u, binary.LittleEndian.Uint16(b[i:]))
		}
	}
	out := make([]byte, 0, len(u))
	for _, r := range utf16.Decode(u) {
		out = utf8.AppendRune(out, r)
	}
	return out
}
