package server

import (
	"context"
	"encoding/json"
	"net/http"
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
	// ImageTokens is the flat charge per base64 image (default: the wire's).
	ImageTokens int `json:"image_tokens,omitempty"`
	// ToolResultBytes caps the next tool result, reserved for.
	ToolResultBytes int `json:"tool_result_bytes,omitempty"`
	// Skills and Memory are bodies loaded outside the system prompt and
	// history.
	Skills []string `json:"skills,omitempty"`
	Memory []string `json:"memory,omitempty"`
}

// AssessResult is the answer of POST /v1/assess decoded: window.Assessment's
// JSON, with the derived figures.
type AssessResult struct {
	Model           string         `json:"model"`
	Wire            string         `json:"wire"`
	Counter         string         `json:"counter"`
	Window          int            `json:"window"`
	InputLimit      int            `json:"input_limit,omitempty"`
	Breakdown       map[string]int `json:"breakdown"`
	Reserves        map[string]any `json:"reserves"`
	HistoryMessages int            `json:"history_messages"`
	Images          int            `json:"images"`
	ImageTokens     int            `json:"image_tokens"`
	Warnings        []string       `json:"warnings,omitempty"`
	Used            int            `json:"used"`
	Budget          int            `json:"budget"`
	Remaining       int            `json:"remaining"`
	ShouldCompact   bool           `json:"should_compact"`
}

func (h *Handler) assess(_ context.Context, req *AssessRequest) (any, error) {
	body := []byte(strings.TrimSpace(string(req.Request)))
	if len(body) == 0 || string(body) == "null" {
		return nil, badRequest("request", "request: required (the provider request body)")
	}
	wire, err := window.ParseWire(req.Wire)
	if err != nil {
		return nil, badRequest("wire", "wire: %v", err)
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"window", req.Window}, {"image_tokens", req.ImageTokens}, {"tool_result_bytes", req.ToolResultBytes}} {
		if n.v < 0 {
			return nil, badRequest(n.field, "%s: %d is negative", n.field, n.v)
		}
	}
	in, err := window.InputsFromRequestBody(body, wire, req.Model)
	if err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Field: "request", Message: "request: " + err.Error()}
	}
	in.Window = req.Window
	in.ImageTokens = req.ImageTokens
	in.NextToolResultBytes = req.ToolResultBytes
	in.Skills, in.Memory = req.Skills, req.Memory
	return window.Assess(in), nil
}
