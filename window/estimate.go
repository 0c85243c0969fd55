package window

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ctxkit/ctxkit/tokens"
)

// messageCost is the estimate for one message.
type messageCost struct {
	tokens  int  // content, images included
	images  int  // base64 images charged flat
	invalid bool // not JSON: charged as text
}

// estimateMessage charges one message exactly as it will be sent. A
// message without base64 images is charged on its compact serialized JSON
// (keys, quoting and escapes are bytes the provider tokenizes too). Every
// base64 image, wherever it sits — a top-level content block, nested in a
// tool_result, an OpenAI data-URL, a Gemini inline_data part — costs
// imageTokens instead of its payload, and the rest of the message is
// charged on its serialized form without the payload. Bytes that are not
// JSON are charged as text.
func estimateMessage(c tokens.Counter, raw []byte, imageTokens int) messageCost {
	// Fast path for messages carrying large payloads: replace every long
	// string literal by a short stand-in, so that decoding and re-encoding
	// touch kilobytes, not megabytes. It holds only when every stand-in
	// turned out to be an image payload (which is emptied anyway);
	// otherwise the message is estimated in full.
	if len(raw) >= elideMin && mayHoldImage(raw) {
		if stub, n := elideLongStrings(raw); n > 0 {
			if cost, out, ok := estimateDecoded(c, stub, imageTokens); ok && !bytes.Contains(out, elidedMarker) {
				return cost
			}
		}
	}
	return estimateFull(c, raw, imageTokens)
}

// estimateFull is estimateMessage without the fast path.
func estimateFull(c tokens.Counter, raw []byte, imageTokens int) messageCost {
	cost, _, ok := estimateDecoded(c, raw, imageTokens)
	if !ok {
		return messageCost{tokens: c.Count(string(raw)), invalid: true}
	}
	return cost
}

// estimateDecoded charges a message that must be JSON (ok is false when it
// is not) and returns the bytes it charged as text.
func estimateDecoded(c tokens.Counter, raw []byte, imageTokens int) (cost messageCost, charged []byte, ok bool) {
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
	images := stripImages(v)
	if images == 0 {
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
	return messageCost{tokens: satAdd(c.Count(string(stub)), satMul(images, imageTokens)), images: images}, stub, true
}

// Long-string elision for the fast path.
const (
	elideMin    = 4096 // shortest string literal replaced by a stand-in
	elidePrefix = 128  // bytes of the literal kept, enough to recognise a data URL
)

var elidedMarker = []byte("#ctxkit-elided#")

// elideLongStrings returns raw with the content of every JSON string
// literal of at least elideMin bytes cut to its first elidePrefix bytes
// plus elidedMarker, and how many it cut. Literals whose kept prefix holds
// an escape are left alone. The scan finds literals with bytes.IndexByte,
// so megabytes of base64 cost a memory scan. On bytes that are not JSON
// the result is meaningless but harmless: the caller falls back.
func elideLongStrings(raw []byte) ([]byte, int) {
	var out []byte
	n, last, i := 0, 0, 0
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
				return raw, 0 // unterminated: let the full path decide
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
			if out == nil {
				out = make([]byte, 0, 4096)
			}
			out = append(out, raw[last:open+1+elidePrefix]...)
			out = append(out, elidedMarker...)
			last = closing
			n++
		}
		i = closing + 1
	}
	if n == 0 {
		return raw, 0
	}
	return append(out, raw[last:]...), n
}

// mayHoldImage is a cheap pre-check: every image shape we discount
// contains one of these markers, so a message without them is charged on
// its bytes without decoding.
func mayHoldImage(b []byte) bool {
	return bytes.Contains(b, []byte("base64")) || bytes.Contains(b, []byte("inline_data")) ||
		bytes.Contains(b, []byte("inlineData"))
}

// stripImages walks a decoded JSON value, empties the payload of every
// base64 image it finds and returns how many it found.
//
// Recognised shapes:
//   - Anthropic: {"type":"base64","media_type":"image/…","data":"…"} (an
//     image block's source) anywhere, e.g. nested in tool_result content;
//   - OpenAI: any string "data:image/…;base64,…" (image_url.url in Chat,
//     image_url in Responses input_image);
//   - Gemini: {"inline_data"|"inlineData": {"mime_type"|"mimeType":
//     "image/…", "data": "…"}}.
func stripImages(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if isAnthropicImageSource(x) {
			x["data"] = ""
			n++
		}
		for _, key := range []string{"inline_data", "inlineData"} {
			if inner, ok := x[key].(map[string]any); ok && isGeminiImage(inner) {
				inner["data"] = ""
				n++
			}
		}
		for k, child := range x {
			if s, ok := child.(string); ok {
				if isImageDataURL(s) {
					x[k] = ""
					n++
				}
				continue
			}
			n += stripImages(child)
		}
	case []any:
		for i, child := range x {
			if s, ok := child.(string); ok {
				if isImageDataURL(s) {
					x[i] = ""
					n++
				}
				continue
			}
			n += stripImages(child)
		}
	}
	return n
}

func isAnthropicImageSource(m map[string]any) bool {
	if m["type"] != "base64" {
		return false
	}
	mt, _ := m["media_type"].(string)
	data, ok := m["data"].(string)
	return ok && data != "" && strings.HasPrefix(strings.ToLower(mt), "image/")
}

func isGeminiImage(m map[string]any) bool {
	mt, _ := m["mime_type"].(string)
	if mt == "" {
		mt, _ = m["mimeType"].(string)
	}
	data, ok := m["data"].(string)
	return ok && data != "" && strings.HasPrefix(strings.ToLower(mt), "image/")
}

func isImageDataURL(s string) bool {
	if len(s) < 16 || !strings.EqualFold(s[:11], "data:image/") {
		return false
	}
	head := s[:min(len(s), 128)]
	comma := strings.IndexByte(head, ',')
	return comma > 0 && strings.HasSuffix(strings.ToLower(head[:comma]), ";base64")
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
