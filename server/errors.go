package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ctxkit/ctxkit/rule"
)

// Error codes carried in the "code" member of an error response. They are
// stable strings a caller can branch on; the HTTP status says the class.
const (
	CodeBadRequest       = "bad_request"            // 400: malformed JSON, a missing or wrong member
	CodeInvalidUTF8      = "invalid_utf8"           // 400: the body is not UTF-8
	CodeBodyTooLarge     = "body_too_large"         // 413: the body exceeds Options.MaxBodyBytes
	CodeTooManyFrames    = "too_many_frames"        // 413: more offers than Options.MaxFrames
	CodeUnsupportedMedia = "unsupported_media_type" // 415: Content-Type is not application/json
	CodeRuleViolation    = "rule_violation"         // 422: a protocol rule is violated; "rule" names it
	CodeNotFound         = "not_found"              // 404: no such route
	CodeMethodNotAllowed = "method_not_allowed"     // 405: wrong method for the route
	CodeRequestTimeout   = "request_timeout"        // 408: the body did not arrive in time
	CodeTimeout          = "timeout"                // 504: the work did not finish in time
	CodeUnavailable      = "unavailable"            // 503: the route needs something not configured, or shutting down
	CodeInternal         = "internal"               // 500: a bug; never the answer to bad input
)

// Error is the object inside an error response, {"error": Error}, and the
// error the client package returns for a non-2xx answer.
type Error struct {
	// Status is the HTTP status; it is not part of the JSON object.
	Status int `json:"-"`
	// Code is one of the Code* constants.
	Code string `json:"code"`
	// Message says what was wrong, in lower case, naming the member at fault.
	Message string `json:"message"`
	// Rule names the violated protocol rule (for example "F3") when there is one.
	Rule rule.Rule `json:"rule,omitempty"`
	// Field is the JSON path of the member at fault, when known.
	Field string `json:"field,omitempty"`

	retryAfter int // seconds, sent as Retry-After when positive
}

// Error implements the error interface.
func (e *Error) Error() string {
	s := fmt.Sprintf("ctxkit server: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Rule != "" {
		s += " (rule " + string(e.Rule) + ")"
	}
	return s
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error *Error `json:"error"`
}

func badRequest(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Field: field, Message: fmt.Sprintf(format, args...)}
}

// writeError writes e as the JSON error envelope with its status.
func writeError(w http.ResponseWriter, e *Error) {
	if e.Status == 0 {
		e.Status = http.StatusInternalServerError
	}
	b, err := json.Marshal(errorBody{Error: e})
	if err != nil { // cannot happen for strings; keep a valid body anyway
		b = []byte(`{"error":{"code":"internal","message":"encoding the error failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(b, '\n'))
}
