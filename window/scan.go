package window

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/tokens"
)

// msgScan reads one message's JSON text in a single validating pass. It
// records where every key and scalar is (to count their decoded text
// later, without copying megabytes of base64 that turn out to be media),
// whether a key or value marks a shape the media rules charge by figure,
// and what tells a user turn: the top-level role, whether the content is
// plain text, and whether any content block or part is something other
// than a tool result.
type msgScan struct {
	b     []byte
	i     int
	depth int
	bad   bool // not valid JSON

	spans []scanSpan
	media bool // a key or value names a media or reasoning shape

	role                      string
	hasContent, hasParts      bool
	plainContent, nonToolPart bool
}

// scanSpan is one key or scalar: b[start:end] is a string literal's body
// (quoted marks excluded) or a number or literal as written.
type scanSpan struct {
	start, end int
	str        bool // a string literal
	escaped    bool // holds a backslash escape
}

// maxScanDepth is encoding/json's nesting limit, so that both accept the
// same texts.
const maxScanDepth = 10000

// Where an object sits, for the user-turn rule.
type scanCtx int

const (
	ctxOther scanCtx = iota
	ctxTop           // the message itself
	ctxBlock         // an element of the top-level content list
	ctxPart          // an element of the top-level parts list (Gemini)
)

// mediaWords are the keys and values of every shape the media rules of
// media.strip charge specially; a message without any of them (and
// without a "data:" string) is charged on its text alone.
var mediaWords = map[string]bool{
	"base64": true, "image": true, "document": true, "inline_data": true, "inlineData": true,
	"file_data": true, "fileData": true, "file_id": true, "file_url": true, "url": true,
	"image_url": true, "input_image": true, "input_file": true, "file": true,
	"thinking": true, "redacted_thinking": true, "reasoning": true,
	"thoughtSignature": true, "thought_signature": true,
}

// scanMessage scans raw; ok is false when it is not valid JSON.
func scanMessage(raw []byte) (s *msgScan, ok bool) {
	s = &msgScan{b: raw}
	s.skipSpace()
	if s.peek() == '{' {
		s.object(ctxTop)
	} else {
		s.value(ctxOther)
	}
	s.skipSpace()
	return s, !s.bad && s.i == len(s.b)
}

// count counts the decoded text of every key and scalar with c.
func (s *msgScan) count(c tokens.Counter) int {
	n := 0
	for _, sp := range s.spans {
		if sp.end > sp.start {
			n = satAdd(n, c.Count(s.text(sp)))
		}
	}
	return n
}

// text returns a span's decoded text: the bytes themselves when they hold
// no escape and are valid UTF-8, else what encoding/json decodes (invalid
// bytes and lone surrogates become U+FFFD, as the decoding path sees them).
func (s *msgScan) text(sp scanSpan) string {
	body := s.b[sp.start:sp.end]
	if !sp.str || (!sp.escaped && utf8.Valid(body)) {
		return string(body)
	}
	if utf8.Valid(body) {
		if out, ok := cgpjson.Unescape(string(body)); ok {
			return out
		}
	}
	var out string
	if err := json.Unmarshal(s.b[sp.start-1:sp.end+1], &out); err != nil {
		return string(body) // not reached: the literal was validated
	}
	return out
}

// userTurn reports whether the message opens a user turn: role user, with
// some content that is not a tool result (Anthropic tool_result blocks,
// OpenAI function_call_output items and Gemini functionResponse parts
// carry the previous turn's tool loop on).
func (s *msgScan) userTurn() bool {
	if s.role != "user" {
		return false
	}
	return s.plainContent || s.nonToolPart || (!s.hasContent && !s.hasParts)
}

// systemRole reports whether the message is a system or developer message.
func (s *msgScan) systemRole() bool { return s.role == "system" || s.role == "developer" }

func (s *msgScan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *msgScan) skipSpace() { s.i = cgpjson.SkipSpace(s.b, s.i) }

// value scans one value; when it is a string, its span is returned.
func (s *msgScan) value(ctx scanCtx) (sp scanSpan, isString bool) {
	s.skipSpace()
	switch c := s.peek(); {
	case s.bad:
	case c == '{':
		s.object(ctx)
	case c == '[':
		s.array(ctx)
	case c == '"':
		sp = s.str()
		s.spans = append(s.spans, sp)
		s.markMedia(sp, false)
		return sp, true
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.number()
	}
	return sp, false
}

func (s *msgScan) literal(word string) {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		s.bad = true
		return
	}
	s.spans = append(s.spans, scanSpan{start: s.i, end: s.i + len(word)})
	s.i += len(word)
}

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *msgScan) number() {
	start := s.i
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.peek() == '-' {
		s.i++
	}
	switch {
	case s.peek() == '0':
		s.i++
	case digits() == 0:
		s.bad = true
		return
	}
	if s.peek() == '.' {
		s.i++
		if digits() == 0 {
			s.bad = true
			return
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if digits() == 0 {
			s.bad = true
			return
		}
	}
	s.spans = append(s.spans, scanSpan{start: start, end: s.i})
}

func (s *msgScan) enter() bool {
	s.depth++
	if s.depth > maxScanDepth {
		s.bad = true
	}
	return !s.bad
}

func (s *msgScan) object(ctx scanCtx) {
	s.i++ // {
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	sawToolPart := false
	s.skipSpace()
	if s.peek() == '}' {
		s.i++
		s.endObject(ctx, sawToolPart)
		return
	}
	for !s.bad {
		s.skipSpace()
		if s.peek() != '"' {
			s.bad = true
			return
		}
		ksp := s.str()
		s.spans = append(s.spans, ksp)
		s.markMedia(ksp, true)
		key := string(s.b[ksp.start:ksp.end])
		s.skipSpace()
		if s.peek() != ':' {
			s.bad = true
			return
		}
		s.i++
		sawToolPart = s.member(ctx, key) || sawToolPart
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.endObject(ctx, sawToolPart)
			return
		default:
			s.bad = true
		}
	}
}

// member scans one member's value and notes what it tells about the turn;
// it reports whether the member is a Gemini tool response.
func (s *msgScan) member(ctx scanCtx, key string) (toolPart bool) {
	child := ctxOther
	if ctx == ctxTop && key == "content" {
		child = ctxBlock
	} else if ctx == ctxTop && key == "parts" {
		child = ctxPart
	}
	sp, isString := s.value(child)
	switch {
	case ctx == ctxTop && key == "role" && isString:
		s.role = s.text(sp)
	case ctx == ctxTop && key == "content":
		s.hasContent = true
		s.plainContent = s.plainContent || isString
	case ctx == ctxTop && key == "parts":
		s.hasParts = true
	case ctx == ctxBlock && key == "type" && isString:
		if t := s.text(sp); t != "tool_result" && t != "function_call_output" {
			s.nonToolPart = true
		}
	case ctx == ctxPart && (key == "functionResponse" || key == "function_response"):
		return true
	}
	return false
}

func (s *msgScan) endObject(ctx scanCtx, sawToolPart bool) {
	if ctx == ctxPart && !sawToolPart {
		s.nonToolPart = true
	}
}

func (s *msgScan) array(ctx scanCtx) {
	s.i++ // [
	if !s.enter() {
		return
	}
	defer func() { s.depth-- }()
	s.skipSpace()
	if s.peek() == ']' {
		s.i++
		return
	}
	for !s.bad {
		s.skipSpace()
		if ctx == ctxBlock && s.peek() == '"' {
			s.nonToolPart = true // a plain string in a content list is text
		}
		s.value(ctx)
		s.skipSpace()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.bad = true
		}
	}
}

// str scans a string literal at s.i, validating it.
func (s *msgScan) str() scanSpan {
	sp := scanSpan{start: s.i + 1, str: true}
	j := sp.start
	for {
		if j >= len(s.b) {
			s.bad = true
			s.i = len(s.b)
			sp.end = sp.start
			return sp
		}
		c := s.b[j]
		switch {
		case c == '"':
			sp.end = j
			s.i = j + 1
			return sp
		case c < 0x20:
			s.bad = true
		case c == '\\':
			sp.escaped = true
			if !s.escape(j + 1) {
				s.bad = true
			}
			if j+1 < len(s.b) && s.b[j+1] == 'u' {
				j += 4
			}
			j++
		}
		j++
	}
}

// escape reports whether b[j] starts a valid escape (after a backslash).
func (s *msgScan) escape(j int) bool {
	if j >= len(s.b) {
		return false
	}
	switch s.b[j] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if j+4 >= len(s.b) {
			return false
		}
		for _, h := range s.b[j+1 : j+5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// markMedia notes a key or value that names a media or reasoning shape,
// and any "data:" string (an inline data URL).
func (s *msgScan) markMedia(sp scanSpan, key bool) {
	body := s.b[sp.start:sp.end]
	switch {
	case s.media:
	case len(body) <= 20 && (mediaWords[string(body)] || (sp.escaped && mediaWords[s.text(sp)])):
		s.media = true
	case !key && len(body) >= 5 && (body[0]|0x20) == 'd' && (body[1]|0x20) == 'a' && (body[2]|0x20) == 't' && (body[3]|0x20) == 'a' && body[4] == ':':
		s.media = true
	}
}
