package window

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/ctxkit/ctxkit/tokens"
)

// media walks a decoded message, takes out every payload the rules charge
// by figure instead of by text, and counts the text that remains.
//
// Images (charged at the per-image figure, or the low figure when the
// request declares detail "low"):
//   - Anthropic image blocks, with a base64, url or file source, anywhere
//     (also nested in tool_result content);
//   - OpenAI image_url blocks (Chat) and input_image items (Responses), by
//     data URL, URL or file id; any other "data:image/…;base64," string;
//   - Gemini inline_data/inlineData and file_data/fileData parts with an
//     image/… type.
//
// PDF documents (charged per page): base64 ones at the pages estimated
// from their bytes (Anthropic document blocks, OpenAI
// data:application/pdf URLs, Gemini inline PDF parts); by URL or file id
// (Anthropic url/file sources, OpenAI file and input_file by file_id or
// file_url, Gemini file_data PDFs) at the per-document maximum, since
// their pages cannot be counted. Media by reference of any other type
// (Gemini video or audio) has no per-item figure: it is charged as its
// reference text and reported.
//
// Reasoning (charged to the reasoning share of the message, which the
// wire may drop in earlier turns): Anthropic thinking text, its signature
// and redacted_thinking data; OpenAI reasoning items (summary text and
// encrypted_content); Gemini thought signatures. Opaque payloads cost
// their decoded bytes, less the wire's overhead, at the wire's bytes per
// token.
type media struct {
	c  tokens.Counter
	ch charges
	p  payloads

	images, lowImages, documents, pages int
	refs, unpriced                      int
	reasoning                           int
	unresolved                          bool // a stand-in could not be resolved
}

func (m *media) strip(v any) {
	switch x := v.(type) {
	case map[string]any:
		m.object(x)
		for k, child := range x {
			if m.stripChild(child) {
				x[k] = ""
			}
		}
	case []any:
		for i, child := range x {
			if m.stripChild(child) {
				x[i] = ""
			}
		}
	}
}

// stripChild strips a member or element: a string is charged if it is a
// data URL, and stripChild reports whether to blank it; anything else is
// walked.
func (m *media) stripChild(child any) bool {
	if s, ok := child.(string); ok {
		return m.dataURL(s, false)
	}
	m.strip(child)
	return false
}

// object applies the rules for the shapes an object can take.
func (m *media) object(x map[string]any) {
	typ, _ := x["type"].(string)
	switch typ {
	case "base64": // an Anthropic source
		mt, _ := x["media_type"].(string)
		m.payload(x, "data", mt)
	case "image", "document": // Anthropic blocks by reference
		if src, ok := x["source"].(map[string]any); ok {
			if st, _ := src["type"].(string); st == "url" || st == "file" {
				m.reference(typ == "image", false)
				delete(x, "source")
			}
		}
	case "thinking":
		if s, ok := x["thinking"].(string); ok {
			m.reasoning = satAdd(m.reasoning, m.count(s))
			delete(x, "thinking")
		}
		m.opaque(x, "signature", 0)
	case "redacted_thinking":
		m.opaque(x, "data", 0)
	case "reasoning": // an OpenAI Responses item
		m.opaque(x, "encrypted_content", m.ch.opaqueOverhead)
		for _, k := range []string{"summary", "content"} {
			if v, ok := x[k]; ok {
				m.reasoning = satAdd(m.reasoning, m.countText(v))
				delete(x, k)
			}
		}
	case "image_url": // OpenAI Chat
		url, detail := "", ""
		switch iu := x["image_url"].(type) {
		case string:
			url = iu
		case map[string]any:
			url, _ = iu["url"].(string)
			detail, _ = iu["detail"].(string)
		}
		if url != "" {
			m.openAIImage(url, detail)
			delete(x, "image_url")
		}
	case "input_image": // OpenAI Responses
		url, _ := x["image_url"].(string)
		id, _ := x["file_id"].(string)
		detail, _ := x["detail"].(string)
		if url != "" || id != "" {
			if url == "" {
				url = "file:" + id
			}
			m.openAIImage(url, detail)
			delete(x, "image_url")
			delete(x, "file_id")
		}
	case "file": // OpenAI Chat; an inline file_data is a data URL
		if f, ok := x["file"].(map[string]any); ok && f["file_data"] == nil && (f["file_id"] != nil || f["file_url"] != nil) {
			m.reference(false, false)
			delete(f, "file_id")
			delete(f, "file_url")
		}
	case "input_file": // OpenAI Responses
		if x["file_data"] == nil && (x["file_id"] != nil || x["file_url"] != nil) {
			m.reference(false, false)
			delete(x, "file_id")
			delete(x, "file_url")
		}
	}
	m.gemini(x)
}

// gemini applies the Gemini part rules.
func (m *media) gemini(x map[string]any) {
	for _, key := range []string{"inline_data", "inlineData"} {
		if inner, ok := x[key].(map[string]any); ok {
			m.payload(inner, "data", geminiMime(inner))
		}
	}
	for _, key := range []string{"file_data", "fileData"} {
		inner, ok := x[key].(map[string]any)
		if !ok {
			continue
		}
		mt := strings.ToLower(geminiMime(inner))
		switch {
		case strings.HasPrefix(mt, "image/"):
			m.reference(true, false)
		case mt == "application/pdf":
			m.reference(false, false)
		default:
			m.unpriced++
			continue
		}
		delete(x, key)
	}
	for _, key := range []string{"thoughtSignature", "thought_signature"} {
		m.opaque(x, key, 0)
	}
}

func geminiMime(x map[string]any) string {
	if mt, ok := x["mime_type"].(string); ok {
		return mt
	}
	mt, _ := x["mimeType"].(string)
	return mt
}

// openAIImage charges an OpenAI image given by data URL, URL or file id.
func (m *media) openAIImage(url, detail string) {
	low := strings.EqualFold(detail, "low")
	if strings.HasPrefix(strings.ToLower(url), "data:") {
		m.dataURL(url, low)
		return
	}
	m.reference(true, low)
}

// reference charges an image or a PDF document sent by URL or file id.
func (m *media) reference(image, low bool) {
	m.refs++
	switch {
	case image && low:
		m.lowImages++
	case image:
		m.images++
	default:
		m.documents++
		m.pages = satAdd(m.pages, m.ch.maxPages)
	}
}

// opaque charges obj[key], an opaque reasoning payload, to the reasoning
// share and removes it.
func (m *media) opaque(obj map[string]any, key string, overhead int) {
	s, ok := obj[key].(string)
	if !ok {
		return
	}
	decoded := m.p.size(s) / 4 * 3
	if n := decoded - overhead; n > 0 {
		per := max(m.ch.opaquePerToken, 1)
		m.reasoning = satAdd(m.reasoning, (n+per-1)/per)
	}
	delete(obj, key)
}

// payload empties obj[key] when it is a non-empty base64 string of an
// image or PDF media type, and counts it.
func (m *media) payload(obj map[string]any, key, mediaType string) {
	data, ok := obj[key].(string)
	if !ok || data == "" {
		return
	}
	mt := strings.ToLower(mediaType)
	switch {
	case strings.HasPrefix(mt, "image/"):
		m.images++
	case mt == "application/pdf":
		r, ok := m.p.reader(data)
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
// it when so (an image declared low at the low figure).
func (m *media) dataURL(s string, low bool) bool {
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
	case strings.HasPrefix(mt, "image/") && low:
		m.lowImages++
		return true
	case strings.HasPrefix(mt, "image/"):
		m.images++
		return true
	case strings.HasPrefix(mt, "application/pdf;"):
		r, ok := m.p.reader(s)
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

// countText counts the decoded text of every key and scalar left in v, as
// msgScan counts a message without media (the sum does not depend on the
// order maps are walked in).
func (m *media) countText(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for k, child := range x {
			n = satAdd(n, m.count(k))
			n = satAdd(n, m.countText(child))
		}
		return n
	case []any:
		n := 0
		for _, child := range x {
			n = satAdd(n, m.countText(child))
		}
		return n
	case string:
		return m.count(x)
	case json.Number:
		return m.count(string(x))
	case bool:
		if x {
			return m.count("true")
		}
		return m.count("false")
	case nil:
		return m.count("null")
	}
	return 0
}

// count counts one string, resolving a fast-path stand-in to its text.
func (m *media) count(s string) int {
	full, ok := m.p.text(s)
	if !ok {
		m.unresolved = true
		return 0
	}
	if full == "" {
		return 0
	}
	return m.c.Count(full)
}
