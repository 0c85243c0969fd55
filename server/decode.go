package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/server/api"
)

// checkContentType accepts application/json, with no parameter other than
// charset=utf-8.
func checkContentType(ct string) *api.Error {
	unsupported := func(why string) *api.Error {
		return &api.Error{Status: http.StatusUnsupportedMediaType, Code: api.CodeUnsupportedMedia,
			Message: "content type: " + why + "; send Content-Type: application/json"}
	}
	if ct == "" {
		return unsupported("missing")
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return unsupported(fmt.Sprintf("cannot parse %q", ct))
	}
	if mt != "application/json" {
		return unsupported(fmt.Sprintf("%q is not accepted", mt))
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return unsupported(fmt.Sprintf("parameter %s=%s is not accepted", k, v))
		}
	}
	return nil
}

// decodeJSON decodes one JSON value from body into v. The body must be valid
// UTF-8 (encoding/json would otherwise replace bad bytes silently) and hold
// exactly one value (trailing data is a syntax error). A member the API
// does not define is refused with 400 naming it, so that a misspelt option
// ("placment") is not silently ignored. The CGP objects inside a request
// (frames, and the provider request body of /v1/assess) are not the API's
// own: their unknown members are ignored, as CGP's rule U1 asks of every
// receiver.
func decodeJSON(body []byte, v any) *api.Error {
	if !utf8.Valid(body) {
		off := firstInvalidUTF8(body)
		return &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidUTF8,
			Message: fmt.Sprintf("decode body: invalid UTF-8 at byte offset %d", off)}
	}
	if fd, ok := v.(fastDecoder); ok && fd.decodeFast(body) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) == 0 {
		return nil
	}
	if name, ok := unknownMember(err); ok {
		return api.BadRequest(name, "decode body: unknown member %q; see the request schema in docs/openapi.yaml", name)
	}
	// Any other fault: encoding/json's own report (offsets, trailing data,
	// the member of a type error), from a fresh value.
	reflect.ValueOf(v).Elem().SetZero()
	if err := json.Unmarshal(body, v); err != nil {
		return jsonError(err)
	}
	return nil
}

// unknownMember returns the member name of encoding/json's error for a
// member the target type lacks (DisallowUnknownFields).
func unknownMember(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	name, qerr := strconv.Unquote(rest)
	if qerr != nil {
		return rest, true
	}
	return name, true
}

// fastDecoder is a request body with a fast decoder for its common shape
// (see fastReader). decodeFast reports false, leaving the body zero, for
// anything it does not decode exactly as encoding/json would.
type fastDecoder interface {
	decodeFast(body []byte) bool
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// jsonError turns an encoding/json error into a 400 naming the member and
// offset where it can.
func jsonError(err error) *api.Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && syn.Offset == 0:
		return api.BadRequest("", "decode body: the body is empty; expected a JSON object")
	case errors.As(err, &syn) && strings.Contains(syn.Error(), "unexpected end of JSON input"):
		return api.BadRequest("", "decode body: the JSON value is truncated")
	case errors.As(err, &syn):
		return api.BadRequest("", "decode body: invalid JSON at byte offset %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := jsonPath(typ.Field)
		return api.BadRequest(field, "decode body: member %q: expected %s, got JSON %s", field, typ.Type, typ.Value)
	default:
		if e := decodeRuleError(err); e != nil {
			return e
		}
		// Includes the nesting-depth limit of encoding/json and errors
		// returned by UnmarshalJSON methods of the data model.
		return api.BadRequest("", "decode body: %v", err)
	}
}

// jsonPath drops the Go names of embedded structs from encoding/json's
// field path, leaving the JSON member names of the API, which are all lower
// case: exported ones start with an upper-case letter, and the data model's
// decoders embed their fields as a local type named plain.
func jsonPath(p string) string {
	parts := strings.Split(p, ".")
	out := parts[:0]
	for _, s := range parts {
		if s != "" && s != "plain" && !unicode.IsUpper([]rune(s)[0]) {
			out = append(out, s)
		}
	}
	return strings.Join(out, ".")
}
