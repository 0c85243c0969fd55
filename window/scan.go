package window

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/tokens"
)

// msgScan walks one message's JSON text once (it must be valid JSON) and
// counts the decoded text of every key and scalar with c (nil: count
// nothing), and notes what tells a user turn: the top-level role, whether
// the content is plain text, and whether any content block or part is
// something other than a tool result.
type msgScan struct {
	b []byte
	i int
	c tokens.Counter
	n int

	role                      string
	hasContent, hasParts      bool
	plainContent, nonToolPart bool
}

// Where an object sits, for the user-turn rule.
type scanCtx int

const (
	ctxOther scanCtx = iota
	ctxTop           // the message itself
	ctxBlock         // an element of the top-level content list
	ctxPart          // an element of the top-level parts list (Gemini)
)

func (s *msgScan) run() {
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == '{' {
		s.object(ctxTop)
		return
	}
	s.value(ctxOther)
}

// userTurn reports whether the message opens a user turn: role user, with
// some content that is not a tool result (Anthropic tool_result blocks,
// OpenAI function_call_output items, Gemini functionResponse parts carry
// the previous turn's tool loop on).
func (s *msgScan) userTurn() bool {
	if s.role != "user" {
		return false
	}
	return s.plainContent || s.nonToolPart || (!s.hasContent && !s.hasParts)
}

func (s *msgScan) count(str string) {
	if s.c != nil && str != "" {
		s.n = satAdd(s.n, s.c.Count(str))
	}
}

func (s *msgScan) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value; the string it holds, if any, is returned.
func (s *msgScan) value(ctx scanCtx) (str string, isString bool) {
	s.skipSpace()
	if s.i >= len(s.b) {
		return "", false
	}
	switch s.b[s.i] {
	case '{':
		s.object(ctx)
	case '[':
		s.array(ctx)
	case '"':
		str = s.str()
		s.count(str)
		return str, true
	default: // number, true, false, null: counted as written
		start := s.i
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				break
			}
			s.i++
		}
		s.count(string(s.b[start:s.i]))
	}
	return "", false
}

func (s *msgScan) object(ctx scanCtx) {
	s.i++ // {
	sawToolPart := false
	for {
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] == '}' {
			s.i++
			break
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		key := s.str()
		s.count(key)
		s.skipSpace()
		s.i++ // :
		child := ctxOther
		if ctx == ctxTop && (key == "content" || key == "parts") {
			child = ctxBlock
			if key == "parts" {
				child = ctxPart
			}
		}
		str, isString := s.value(child)
		switch {
		case ctx == ctxTop && key == "role" && isString:
			s.role = str
		case ctx == ctxTop && key == "content":
			s.hasContent = true
			s.plainContent = s.plainContent || isString
		case ctx == ctxTop && key == "parts":
			s.hasParts = true
		case ctx == ctxBlock && key == "type" && isString:
			if str != "tool_result" && str != "function_call_output" {
				s.nonToolPart = true
			}
		case ctx == ctxPart && (key == "functionResponse" || key == "function_response"):
			sawToolPart = true
		}
	}
	if ctx == ctxPart && !sawToolPart {
		s.nonToolPart = true
	}
}

func (s *msgScan) array(ctx scanCtx) {
	s.i++ // [
	for {
		s.skipSpace()
		if s.i >= len(s.b) || s.b[s.i] == ']' {
			s.i++
			return
		}
		if s.b[s.i] == ',' {
			s.i++
			continue
		}
		if ctx == ctxBlock && s.b[s.i] == '"' {
			s.nonToolPart = true // a plain string in a content list is text
		}
		s.value(ctx)
	}
}

// str scans a string literal at s.i and returns its decoded text: the
// bytes themselves when they hold no escape and are valid UTF-8, else what
// encoding/json decodes (invalid bytes become U+FFFD either way, as the
// tree path decodes them).
func (s *msgScan) str() string {
	start := s.i + 1
	j, escaped := start, false
	for j < len(s.b) && s.b[j] != '"' {
		if s.b[j] == '\\' {
			escaped = true
			j++
		}
		j++
	}
	end := min(j, len(s.b))
	s.i = end + 1
	body := s.b[start:end]
	if !escaped && utf8.Valid(body) {
		return string(body)
	}
	var out string
	if err := json.Unmarshal(s.b[start-1:min(end+1, len(s.b))], &out); err != nil {
		return string(body)
	}
	return out
}
