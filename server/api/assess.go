package api

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/ctxkit/ctxkit/window"
)

// AssessRequest is the body of POST /v1/assess.
type AssessRequest struct {
	// Request is the provider request body as it will be sent: Anthropic
	// Messages, OpenAI Chat Completions or Responses, or Gemini
	// generateContent. Required.
	Request json.RawMessage `json:"request"`
	// Model overrides the body's "model" member.
	Model string `json:"model,omitempty"`
	// Wire forces the body's shape: anthropic, openai or gemini (default:
	// the model catalog's wire, else detected).
	Wire string `json:"wire,omitempty"`
	// Window is the effective context window in tokens (default: the
	// model catalog's).
	Window int `json:"window,omitempty"`
	// ImageTokens is the charge per image (default: the model's catalog
	// figure, else its wire's).
	ImageTokens int `json:"image_tokens,omitempty"`
	// PageTokens is the charge per PDF page (default: the model's catalog
	// figure, else its wire's).
	PageTokens int `json:"page_tokens,omitempty"`
	// ToolResultBytes caps the next tool result, reserved for.
	ToolResultBytes int `json:"tool_result_bytes,omitempty"`
	// Skills and Memory are bodies loaded outside the system prompt and
	// history.
	Skills []string `json:"skills,omitempty"`
	// Memory bodies are charged to the memory lane.
	Memory []string `json:"memory,omitempty"`
}

// Inputs reads the request body and applies the request's overrides: the
// window.Inputs to assess, or an *Error naming the member at fault. The
// CLI assesses locally through it too.
func (req *AssessRequest) Inputs() (window.Inputs, error) {
	body := []byte(strings.TrimSpace(string(req.Request)))
	if len(body) == 0 || string(body) == "null" {
		return window.Inputs{}, BadRequest("request", "request: required (the provider request body)")
	}
	wire, err := window.ParseWire(req.Wire)
	if err != nil {
		return window.Inputs{}, BadRequest("wire", "wire: %v", err)
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"window", req.Window}, {"image_tokens", req.ImageTokens}, {"page_tokens", req.PageTokens}, {"tool_result_bytes", req.ToolResultBytes}} {
		if n.v < 0 {
			return window.Inputs{}, BadRequest(n.field, "%s: %d is negative", n.field, n.v)
		}
	}
	in, err := window.InputsFromRequestBody(body, wire, req.Model)
	if err != nil {
		field := "request"
		var se *window.ShapeError
		if errors.As(err, &se) && se.Model == "" {
			field = "wire" // the wire named does not fit the body
		}
		return window.Inputs{}, BadRequest(field, "%s: %v", field, err)
	}
	in.Window = req.Window
	in.ImageTokens, in.PageTokens = req.ImageTokens, req.PageTokens
	in.NextToolResultBytes = req.ToolResultBytes
	in.Skills, in.Memory = req.Skills, req.Memory
	return in, nil
}
