package window

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/tokens"
)

// messageCost is the estimate for one message.
type messageCost struct {
	tokens    int  // content, images and documents included
	images    int  // base64 images charged flat
	documents int  // base64 PDF documents charged per page
	pages     int  // pages estimated across those documents
	invalid   bool // not JSON: charged as text
}

// charges are the flat charges that replace base64 payloads.
type charges struct {
	image int // per base64 image
	page  int // per estimated page of a base64 PDF
}

// estimateMessage charges one message exactly as it will be sent. A
// message without base64 images is charged on its compact serialized JSON
// (keys, quoting and escapes are bytes the provider tokenizes too). Every
// base64 image, wherever it sits — a top-level content block, nested in a
// tool_result, an OpenAI data-URL, a Gemini inline_data part — costs
// imageTokens instead of its payload, and the rest of the message is
// charged on its serialized form without the payload. Bytes that are not
// JSON are charged as text. Base64 PDF documents (an Anthropic document
// block's base64 source, a Gemini inline_data part, an OpenAI
// data:application/pdf URL) are treated the same way, at ch.page tokens for
// each page estimated from the decoded bytes (see pdfPages).
func estimateMessage(c tokens.Counter, raw []byte, ch charges) messageCost {
	// Fast path for messages carrying large payloads: replace every long
	// string literal by a short stand-in, so that decoding and re-encoding
	// touch kilobytes, not megabytes. It holds only when every stand-in
	// turned out to be an image or document payload (which is emptied
	// anyway; a document's pages are counted on the original literal, which
	// the stand-in points at); otherwise the message is estimated in full.
	if len(raw) >= elideMin && mayHoldImage(raw) {
		if stub, spans := elideLongStrings(raw); len(spans) > 0 {
			p := payloads{raw: raw, spans: spans}
			if cost, out, ok := estimateDecoded(c, stub, ch, p); ok && !bytes.Contains(out, elidedMarker) {
				return cost
			}
		}
	}
	return estimateFull(c, raw, ch)
}

// estimateFull is estimateMessage without the fast path.
func estimateFull(c tokens.Counter, raw []byte, ch charges) messageCost {
	cost, _, ok := estimateDecoded(c, raw, ch, payloads{})
	if !ok {
		return messageCost{tokens: c.Count(string(raw)), invalid: true}
	}
	return cost
}

// estimateDecoded charges a message that must be JSON (ok is false when it
// is not) and returns the bytes it charged as text.
func estimateDecoded(c tokens.Counter, raw []byte, ch charges, p payloads) (cost messageCost, charged []byte, ok bool) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return messageCost{}, nil, false
	}
	compact := buf.Bytes()
	if !mayHoldImage(compact) {
		return messageCost{tokens: c.Count(string(compact))}, compact, true
	}
	dec := json.NewDecoder(bytes.NewReader(compact))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return messageCost{}, nil, false
	}
	var m media
	m.strip(v, p)
	if m.unresolved {
		return messageCost{}, nil, false
	}
	if m.images == 0 && m.documents == 0 {
		return messageCost{tokens: c.Count(string(compact))}, compact, true
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Re-encoding a value just decoded cannot fail; if it ever does,
		// charge the original bytes (over-count, never under-count).
		return messageCost{tokens: c.Count(string(compact))}, compact, true
	}
	stub := bytes.TrimSuffix(out.Bytes(), []byte("\n"))
	n := satAdd(c.Count(string(stub)), satMul(m.images, ch.image))
	n = satAdd(n, satMul(m.pages, ch.page))
	return messageCost{tokens: n, images: m.images, documents: m.documents, pages: m.pages}, stub, true
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

// mayHoldImage is a cheap pre-check: every image and PDF document shape
// we discount contains one of these markers, so a message without them is
// charged on its bytes without decoding.
func mayHoldImage(b []byte) bool {
	return bytes.Contains(b, []byte("base64")) || bytes.Contains(b, []byte("inline_data")) ||
		bytes.Contains(b, []byte("inlineData"))
}

// media tallies the base64 payloads a walk emptied.
type media struct {
	images, documents, pages int
	unresolved               bool // a fast-path stand-in could not be resolved
}

// strip walks a decoded JSON value and empties the payload of every base64
// image and PDF document it finds, counting images, documents and the
// documents' estimated pages. p resolves fast-path stand-ins.
//
// Recognised shapes:
//   - Anthropic: {"type":"base64","media_type":"image/…"|"application/pdf",
//     "data":"…"} (an image or document block's source) anywhere, e.g.
//     nested in tool_result content;
//   - OpenAI: any string "data:image/…;base64,…" (image_url.url in Chat,
//     image_url in Responses input_image) or "data:application/pdf;base64,…"
//     (file.file_data in Chat, file_data in Responses input_file);
//   - Gemini: {"inline_data"|"inlineData": {"mime_type"|"mimeType":
//     "image/…"|"application/pdf", "data": "…"}}.
//
// A document whose source is plain text is not touched: it is charged on
// its text like any other content.
func (m *media) strip(v any, p payloads) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "base64" {
			mt, _ := x["media_type"].(string)
			m.payload(x, "data", mt, p)
		}
		for _, key := range []string{"inline_data", "inlineData"} {
			if inner, ok := x[key].(map[string]any); ok {
				mt, _ := inner["mime_type"].(string)
				if mt == "" {
					mt, _ = inner["mimeType"].(string)
				}
				m.payload(inner, "data", mt, p)
			}
		}
		for k, child := range x {
			if s, ok := child.(string); ok {
				if m.dataURL(s, p) {
					x[k] = ""
				}
				continue
			}
			m.strip(child, p)
		}
	case []any:
		for i, child := range x {
			if s, ok := child.(string); ok {
				if m.dataURL(s, p) {
					x[i] = ""
				}
				continue
			}
			m.strip(child, p)
		}
	}
}

// payload empties obj[key] when it is a non-empty base64 string of an
// image or PDF media type, and counts it.
func (m *media) payload(obj map[string]any, key, mediaType string, p payloads) {
	data, ok := obj[key].(string)
	if !ok || data == "" {
		return
	}
	mt := strings.ToLower(mediaType)
	switch {
	case strings.HasPrefix(mt, "image/"):
		m.images++
	case mt == "application/pdf":
		r, ok := p.reader(data)
		if !ok {
			m.unresolved = true
			return
		}
		m.documents++
		m.pages = satAdd(m.pages, pdfPages(r))
	default:
		return
	}
	obj[key] = ""
}

// dataURL reports whether s is a base64 image or PDF data URL, counting
// it when so.
func (m *media) dataURL(s string, p payloads) bool {
	if len(s) < 16 || !strings.EqualFold(s[:5], "data:") {
		return false
	}
	head := s[:min(len(s), elidePrefix)]
	comma := strings.IndexByte(head, ',')
	if comma < 0 || !strings.HasSuffix(strings.ToLower(head[:comma]), ";base64") {
		return false
	}
	mt := strings.ToLower(head[5:comma])
	switch {
	case strings.HasPrefix(mt, "image/"):
		m.images++
		return true
	case strings.HasPrefix(mt, "application/pdf;"):
		r, ok := p.reader(s)
		if !ok {
			m.unresolved = true
			return false
		}
		if _, err := io.CopyN(io.Discard, r, int64(comma+1)); err != nil {
			return false // not reached: the header is part of s
		}
		m.documents++
		m.pages = satAdd(m.pages, pdfPages(r))
		return true
	}
	return false
}

// countJSON charges one JSON value (a tool schema) on its compact form;
// bytes that are not JSON are charged as text.
func countJSON(c tokens.Counter, raw []byte) (n int, invalid bool) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return c.Count(string(raw)), true
	}
	return c.Count(buf.String()), false
}
