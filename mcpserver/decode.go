package mcpserver

import (
	"bytes"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeRequest decodes the plain request lines an MCP client sends
// without the SDK's decoder, which allocates two 32 KiB buffers for each
// (BenchmarkDecodeRequest: about 25 µs and 66 KB a tools/call line, against
// 1 µs and 424 B here; see BENCHMARKS.md, issue 17, fourth pass). A line is
// plain when it is one object, already checked to be valid JSON, whose
// members are "jsonrpc": "2.0", a "method" string and optionally an "id"
// (a string, a small integer or null) and "params" (an object or an
// array), each once, with no escape in the strings and no nesting deeper
// than maxPlainDepth. For such a line the result is what
// jsonrpc.DecodeMessage returns (FuzzDecodeRequest holds it to that); any
// other line gives ok false, and the SDK's decoder has it.
func decodeRequest(line []byte) (req *jsonrpc.Request, ok bool) {
	s := scanner{b: line}
	if !s.consume('{') {
		return nil, false
	}
	var version, method, id, params []byte
	if s.consume('}') {
		return nil, false
	}
	for {
		key, ok := s.plainString()
		if !ok || !s.consume(':') {
			return nil, false
		}
		value, ok := s.value()
		if !ok {
			return nil, false
		}
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &version
		case "method":
			slot = &method
		case "id":
			slot = &id
		case "params":
			slot = &params
		default:
			return nil, false
		}
		if *slot != nil {
			return nil, false // a member given twice
		}
		*slot = value
		if s.consume('}') {
			break
		}
		if !s.consume(',') {
			return nil, false
		}
	}
	s.space()
	if s.i != len(s.b) || string(version) != `"2.0"` || method == nil {
		return nil, false
	}
	name, ok := plainStringValue(method)
	if !ok {
		return nil, false
	}
	req = &jsonrpc.Request{Method: string(name)}
	switch {
	case id == nil || string(id) == "null":
	case id[0] == '"':
		v, ok := plainStringValue(id)
		if !ok {
			return nil, false
		}
		req.ID, _ = jsonrpc.MakeID(string(v))
	default:
		n, ok := smallInt(id)
		if !ok {
			return nil, false
		}
		// The SDK decodes a number id as a float64 and converts it.
		req.ID, _ = jsonrpc.MakeID(float64(n))
	}
	if params != nil {
		if params[0] != '{' && params[0] != '[' {
			return nil, false
		}
		req.Params = bytes.Clone(params)
	}
	return req, true
}

// maxPlainDepth is the deepest nesting a plain line has (the SDK refuses
// lines nested deeper than 1000; a plain line is far from that).
const maxPlainDepth = 64

// scanner walks a line already known to be valid JSON.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// consume skips white space and c, reporting whether c was next.
func (s *scanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// plainString reads a string without escapes or bytes outside printable
// ASCII and returns what is between its quotes.
func (s *scanner) plainString() ([]byte, bool) {
	v, ok := s.value()
	if !ok {
		return nil, false
	}
	return plainStringValue(v)
}

// value returns the next value's bytes, white space around it left out.
func (s *scanner) value() ([]byte, bool) {
	s.space()
	start, depth := s.i, 0
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; c {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
			if s.i >= len(s.b) {
				return nil, false
			}
			if depth == 0 {
				s.i++
				return s.b[start:s.i], true
			}
		case '{', '[':
			if depth++; depth > maxPlainDepth {
				return nil, false
			}
		case '}', ']':
			if depth == 0 {
				return bytes.TrimRight(s.b[start:s.i], " \t\n\r"), s.i > start
			}
			if depth--; depth == 0 {
				s.i++
				return s.b[start:s.i], true
			}
		case ',':
			if depth == 0 {
				return bytes.TrimRight(s.b[start:s.i], " \t\n\r"), s.i > start
			}
		}
	}
	return bytes.TrimRight(s.b[start:], " \t\n\r"), s.i > start && depth == 0
}

// plainStringValue returns what is between the quotes of the string v
// when it holds only printable ASCII and no escape.
func plainStringValue(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	v = v[1 : len(v)-1]
	for _, c := range v {
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return nil, false
		}
	}
	return v, true
}

// smallInt reads an integer written without sign, fraction or exponent
// tricks and small enough that a float64 holds it exactly.
func smallInt(v []byte) (int64, bool) {
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}
