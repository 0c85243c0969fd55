package server

import (
	"context"
	"encoding/json"
	"errors"
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

// AssessResult is the answer of POST /v1/assess decoded: window.Assessment's
// JSON, with the derived figures.
type AssessResult struct {
	// Model is the model assessed for ("" when unknown).
	Model string `json:"model"`
	// Wire is the API family: anthropic, openai or gemini.
	Wire string `json:"wire"`
	// Counter names the token counter used (o200k_base, cl100k_base or safe).
	Counter string `json:"counter"`
	// Window is the effective context window in tokens.
	Window int `json:"window"`
	// InputLimit is the model's input limit when it has one.
	InputLimit int `json:"input_limit,omitempty"`
	// Breakdown is the usage per lane: system, tool_schemas, history, framing, skills, memory.
	Breakdown map[string]int `json:"breakdown"`
	// Reserves are thinking, tool_result, output, safety_margin and the thinking_accounting rule.
	Reserves map[string]any `json:"reserves"`
	// HistoryMessages is the number of messages in the history.
	HistoryMessages int `json:"history_messages"`
	// Images is the number of base64 images charged flat.
	Images int `json:"images"`
	// ImageTokens is the charge per image.
	ImageTokens int `json:"image_tokens"`
	// LowDetailImages were declared small (OpenAI detail "low") and
	// charged ImageLowTokens each.
	LowDetailImages int `json:"low_detail_images,omitempty"`
	ImageLowTokens  int `json:"image_low_tokens,omitempty"`
	// Documents are PDF documents charged Pages pages at PageTokens each;
	// one sent by URL or file id is charged MaxPages pages.
	Documents  int `json:"documents,omitempty"`
	Pages      int `json:"pages,omitempty"`
	PageTokens int `json:"page_tokens"`
	MaxPages   int `json:"max_pages"`
	// References counts the images and documents sent by URL or file id.
	References int `json:"references,omitempty"`
	// ReasoningDropped is earlier-turn reasoning the wire does not keep in
	// the context, not charged.
	ReasoningDropped int `json:"reasoning_dropped,omitempty"`
	// Calibration is the factor the lanes were scaled by (1 here).
	Calibration float64 `json:"calibration"`
	// Warnings lists inputs that were clamped, assumed (an unknown model)
	// or charged as text.
	Warnings []string `json:"warnings,omitempty"`
	// Used is the total usage across the lanes.
	Used int `json:"used"`
	// Budget is the window minus the reserves, floored at 0.
	Budget int `json:"budget"`
	// Remaining is what is left before compaction is advised.
	Remaining int `json:"remaining"`
	// ShouldCompact is the compaction decision.
	ShouldCompact bool `json:"should_compact"`
}

func (h *Handler) assess(_ context.Context, req *AssessRequest) (any, error) {
	in, err := req.Inputs()
	if err != nil {
		return nil, err
	}
	return window.Assess(in), nil
}

// Inputs reads the request body and applies the request's overrides: the
// window.Inputs to assess, or an *Error naming the member at fault. The
// CLI assesses locally through it too.
func (req *AssessRequest) Inputs() (window.Inputs, error) {
	body := []byte(strings.TrimSpace(string(req.Request)))
	if len(body) == 0 || string(body) == "null" {
		return window.Inputs{}, badRequest("request", "request: required (the provider request body)")
	}
	wire, err := window.ParseWire(req.Wire)
	if err != nil {
		return window.Inputs{}, badRequest("wire", "wire: %v", err)
	}
	for _, n := range []struct {
		field string
		v     int
	}{{"window", req.Window}, {"image_tokens", req.ImageTokens}, {"page_tokens", req.PageTokens}, {"tool_result_bytes", req.ToolResultBytes}} {
		if n.v < 0 {
			return window.Inputs{}, badRequest(n.field, "%s: %d is negative", n.field, n.v)
		}
	}
	in, err := window.InputsFromRequestBody(body, wire, req.Model)
	if err != nil {
		field := "request"
		var se *window.ShapeError
		if errors.As(err, &se) && se.Model == "" {
			field = "wire" // the wire named does not fit the body
		}
		return window.Inputs{}, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Field: field, Message: field + ": " + err.Error()}
	}
	in.Window = req.Window
	in.ImageTokens, in.PageTokens = req.ImageTokens, req.PageTokens
	in.NextToolResultBytes = req.ToolResultBytes
	in.Skills, in.Memory = req.Skills, req.Memory
	return in, nil
}
