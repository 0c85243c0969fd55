package window

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/tokens"
)

// messageCost is the estimate for one message.
type messageCost struct {
	// tokens is the whole charge: text, media and reasoning.
	tokens int
	// reasoning is the part of tokens that reasoning carried in the
	// message costs (thinking text, summaries, opaque payloads); on a wire
	// that drops reasoning from turns before the last user turn, it is not
	// charged once a user turn follows.
	reasoning int
	images    int // images charged at the per-image figure
	lowImages int // images declared small, charged at the low figure
	documents int // PDF documents charged per page
	pages     int // pages charged across those documents
	refs      int // images and documents sent by URL or file id
	unpriced  int // media by reference with no per-item figure, charged as text
	userTurn  bool
	system    bool // role system or developer (the OpenAI wire's system prompt)
	invalid   bool // not JSON: charged as text
}

// charges are the figures that replace media payloads and opaque
// reasoning.
type charges struct {
	image          int // per image whose size is not declared
	imageLow       int // per image declared small (OpenAI detail "low")
	page           int // per PDF page
	maxPages       int // pages charged for a document by reference
	opaquePerToken int // decoded bytes of an opaque payload per token
	opaqueOverhead int // decoded bytes of each opaque payload that are free
}

// estimateMessage charges one message as the provider will count it: the
// decoded text of every key and scalar (not the JSON spelling: escapes,
// quotes and punctuation are not model input), images and documents at
// their per-item figures wherever they sit (base64, URL or file id), and
// reasoning by the wire's rule (see media). Bytes that are not JSON are
// charged as text.
func estimateMessage(c tokens.Counter, raw []byte, ch charges) messageCost {
	return estimate(c, raw, ch, true)
}

// estimateFull is estimateMessage without the fast path for large
// payloads (tests compare the two).
func estimateFull(c tokens.Counter, raw []byte, ch charges) messageCost {
	return estimate(c, raw, ch, false)
}

func estimate(c tokens.Counter, raw []byte, ch charges, elide bool) messageCost {
	sc, ok := scanMessage(raw)
	if !ok {
		return messageCost{tokens: c.Count(string(raw)), invalid: true}
	}
	if !sc.media {
		return messageCost{tokens: sc.count(c), userTurn: sc.userTurn(), system: sc.systemRole()}
	}
	cost, ok := messageCost{}, false
	// Messages carrying large payloads: replace every long string literal
	// by a short stand-in first, so that decoding touches kilobytes, not
	// megabytes; stand-ins are resolved to their full text when counted.
	if elide && len(raw) >= elideMin {
		if stub, spans := elideLongStrings(raw); len(spans) > 0 {
			cost, ok = estimateTree(c, stub, ch, payloads{raw: raw, spans: spans})
		}
	}
	if !ok {
		cost, ok = estimateTree(c, raw, ch, payloads{})
	}
	if !ok { // not reached: raw is valid JSON
		return messageCost{tokens: c.Count(string(raw)), invalid: true}
	}
	cost.userTurn, cost.system = sc.userTurn(), sc.systemRole()
	return cost
}

// estimateTree decodes a message and charges it with the media and
// reasoning rules; ok is false when a stand-in could not be resolved.
func estimateTree(c tokens.Counter, raw []byte, ch charges, p payloads) (messageCost, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return messageCost{}, false
	}
	m := media{c: c, ch: ch, p: p}
	m.strip(v)
	text := m.countText(v)
	if m.unresolved {
		return messageCost{}, false
	}
	n := satAdd(text, m.reasoning)
	n = satAdd(n, satMul(m.images, ch.image))
	n = satAdd(n, satMul(m.lowImages, ch.imageLow))
	n = satAdd(n, satMul(m.pages, ch.page))
	return messageCost{
		tokens: n, reasoning: m.reasoning,
		images: m.images, lowImages: m.lowImages, documents: m.documents, pages: m.pages,
		refs: m.refs, unpriced: m.unpriced,
	}, true
}

// Long-string elision for the fast path.
const (
	elideMin    = 4096 // shortest string literal replaced by a stand-in
	elidePrefix = 128  // bytes of the literal kept, enough to recognise a data URL
)

var elidedMarker = []byte("#ctxkit-elided#")

// span is the position of one elided string literal in the original
// message: raw[open] and raw[closing] are its quotes.
type span struct{ open, closing int }

// elideLongStrings returns raw with the content of every JSON string
// literal of at least elideMin bytes cut to its first elidePrefix bytes
// plus elidedMarker and the literal's index in spans, and the spans it
// cut. Literals whose kept prefix holds an escape are left alone. The
// scan finds literals with bytes.IndexByte, so megabytes of base64 cost a
// memory scan. On bytes that are not JSON the result is meaningless but
// harmless: the caller falls back.
func elideLongStrings(raw []byte) ([]byte, []span) {
	var out []byte
	var spans []span
	last, i := 0, 0
	for {
		q := bytes.IndexByte(raw[i:], '"')
		if q < 0 {
			break
		}
		open := i + q
		j := open + 1
		closing := -1
		for {
			k := bytes.IndexByte(raw[j:], '"')
			if k < 0 {
				return raw, nil // unterminated: let the full path decide
			}
			end := j + k
			backslashes := 0
			for p := end - 1; p > open && raw[p] == '\\'; p-- {
				backslashes++
			}
			if backslashes%2 == 0 {
				closing = end
				break
			}
			j = end + 1
		}
		if closing-open-1 >= elideMin && bytes.IndexByte(raw[open+1:open+1+elidePrefix], '\\') < 0 {
			if !validLiteral(raw[open+1 : closing]) {
				// The stand-in would hide what makes the message
				// invalid JSON: let the full path decide.
				return raw, nil
			}
			if out == nil {
				out = make([]byte, 0, 4096)
			}
			out = append(out, raw[last:open+1+elidePrefix]...)
			out = append(out, elidedMarker...)
			out = strconv.AppendInt(out, int64(len(spans)), 10)
			out = append(out, '#')
			last = closing
			spans = append(spans, span{open, closing})
		}
		i = closing + 1
	}
	if len(spans) == 0 {
		return raw, nil
	}
	return append(out, raw[last:]...), spans
}

// validLiteral reports whether b, the content of a JSON string literal
// between its quotes, is valid JSON: no control byte and only valid
// escapes. Control bytes are found eight at a time, so megabytes of base64
// cost about a memory scan.
func validLiteral(b []byte) bool {
	const highs, space = 0x8080808080808080, 0x2020202020202020
	i := 0
	for ; i+8 <= len(b); i += 8 {
		// A byte below 0x20 leaves its high bit set in x-space, where no
		// byte of x has it set (bytes >= 0x80 are excluded by ^x).
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-space)&^x&highs != 0 {
			return false
		}
	}
	for _, c := range b[i:] {
		if c < 0x20 {
			return false
		}
	}
	for {
		k := bytes.IndexByte(b, '\\')
		if k < 0 {
			return true
		}
		if k+1 >= len(b) {
			return false
		}
		switch b[k+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			b = b[k+2:]
		case 'u':
			if k+6 > len(b) {
				return false
			}
			for _, h := range b[k+2 : k+6] {
				if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
					return false
				}
			}
			b = b[k+6:]
		default:
			return false
		}
	}
}

// payloads gives back the full text of string literals the fast path
// elided; the zero value elides nothing.
type payloads struct {
	raw   []byte
	spans []span
}

// reader returns the full text of s — s itself, or, when s is a stand-in
// for an elided literal, the original literal — as a reader, without
// copying an unescaped literal.
// ok is false when s looks like a stand-in that cannot be resolved (its
// kept prefix was not valid UTF-8, say); the caller then gives up the fast
// path.
func (p payloads) reader(s string) (r io.Reader, ok bool) {
	if len(p.spans) == 0 || !strings.Contains(s, string(elidedMarker)) {
		return strings.NewReader(s), true
	}
	if len(s) <= elidePrefix || !strings.HasPrefix(s[elidePrefix:], string(elidedMarker)) {
		return nil, false
	}
	rest := s[elidePrefix+len(elidedMarker):]
	end := strings.IndexByte(rest, '#')
	if end < 0 {
		return nil, false
	}
	idx, err := strconv.Atoi(rest[:end])
	if err != nil || idx < 0 || idx >= len(p.spans) {
		return nil, false
	}
	sp := p.spans[idx]
	if string(p.raw[sp.open+1:sp.open+1+elidePrefix]) != s[:elidePrefix] {
		return nil, false
	}
	body := p.raw[sp.open+1 : sp.closing]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return bytes.NewReader(body), true
	}
	var full string
	if err := json.Unmarshal(p.raw[sp.open:sp.closing+1], &full); err != nil {
		return nil, false
	}
	return strings.NewReader(full), true
}

// text returns the full text of s (s itself, or the literal a stand-in
// elided).
func (p payloads) text(s string) (string, bool) {
	if len(p.spans) == 0 || !strings.Contains(s, string(elidedMarker)) {
		return s, true
	}
	r, ok := p.reader(s)
	if !ok {
		return "", false
	}
	var b strings.Builder
	if _, err := io.Copy(&b, r); err != nil {
		return "", false
	}
	return b.String(), true
}

// size returns the byte length of s's full text, without copying it when
// the elided literal holds no escape.
func (p payloads) size(s string) int {
	if len(p.spans) == 0 || !strings.Contains(s, string(elidedMarker)) {
		return len(s)
	}
	rest, ok := strings.CutPrefix(s[min(len(s), elidePrefix):], string(elidedMarker))
	if !ok {
		return len(s)
	}
	end := strings.IndexByte(rest, '#')
	if end < 0 {
		return len(s)
	}
	idx, err := strconv.Atoi(rest[:end])
	if err != nil || idx < 0 || idx >= len(p.spans) {
		return len(s)
	}
	sp := p.spans[idx]
	if bytes.IndexByte(p.raw[sp.open+1:sp.closing], '\\') >= 0 {
		if full, ok := p.text(s); ok {
			return len(full) // escapes written are not bytes of the payload
		}
	}
	return sp.closing - sp.open - 1
}

// countJSON charges one JSON value (a tool schema) on its compact form
// with every string decoded (so \u escapes cost what the character costs);
// bytes that are not JSON are charged as text.
func countJSON(c tokens.Counter, raw []byte) (n int, invalid bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return c.Count(string(raw)), true
	}
	out, err := cgpjson.MarshalNoEscape(v)
	if err != nil {
		return c.Count(string(raw)), false // not reached: v was just decoded
	}
	return c.Count(string(out)), false
}
