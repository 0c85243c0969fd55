// Package api holds the shapes of ctxkit's HTTP API (`ctxkit serve`,
// package server): the route paths, every request and answer body, and
// the error object. The server decodes and the Go client (package
// server/client) encodes the same types, so a client links none of the
// server. The answers are the core's own types where the core owns the
// shape: compose.Result, window.Assessment, host.FanOut.
package api

import (
	"fmt"
	"net/http"

	"github.com/ctxkit/ctxkit/rule"
)

// Route paths of the API.
const (
	PathCompose = "/v1/compose"
	PathContext = "/v1/context"
	PathAssess  = "/v1/assess"
	PathPrompt  = "/v1/prompt"
	PathQuery   = "/v1/query"
	PathHealth  = "/healthz"
	PathMetrics = "/metrics"
	// PathUsage is GET /v1/usage?since=T: the UR1 usage report of every
	// frame /v1/query served since T (a protocol or RFC 3339 timestamp;
	// absent: all the recorder holds).
	PathUsage = "/v1/usage"
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

	// RetryAfter, when positive, is sent as the Retry-After header, in
	// seconds; it is not part of the JSON object.
	RetryAfter int `json:"-"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	s := fmt.Sprintf("ctxkit server: %d %s: %s", e.Status, e.Code, e.Message)
	if e.Rule != "" {
		s += " (rule " + string(e.Rule) + ")"
	}
	return s
}

// BadRequest is a 400 naming the member at fault: field is its JSON
// path, and the message is formatted from format and args.
func BadRequest(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Field: field, Message: fmt.Sprintf(format, args...)}
}
