package window

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// InputsFromRequestBody reads a provider request body — Anthropic Messages,
// OpenAI Chat Completions or Responses, or Gemini generateContent — into the
// Inputs of the request it describes: model, system prompt, tool schemas,
// messages as sent, thinking budget and requested output. wire forces the
// shape (WireUnknown: the catalog's wire for the model, else detected from
// the members); model, when non-empty, overrides the body's "model".
//
// It is what `ctxkit assess` and POST /v1/assess read a body with (the HTTP
// server adds window, image and tool-result options). The caller fills the
// remaining Inputs fields. A body that is not a JSON object, whose shape
// cannot be told, or whose arrays or token counts have the wrong type is an
// error naming the member.
func InputsFromRequestBody(body []byte, wire Wire, model string) (Inputs, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return Inputs{}, fmt.Errorf("request body is not a JSON object: %w", err)
	}
	in := Inputs{Model: model}
	if in.Model == "" {
		_ = json.Unmarshal(top["model"], &in.Model)
	}
	sh := bodyShape(top)
	switch {
	case wire != WireUnknown:
		if err := sh.check(wire, ""); err != nil {
			return Inputs{}, err
		}
	default:
		if m, ok := DefaultCatalog().lookup(in.Model); ok && m.Wire != WireUnknown {
			if err := sh.check(m.Wire, in.Model); err != nil {
				return Inputs{}, err
			}
			wire = m.Wire
		} else {
			wire = sh.wire
		}
	}
	in.Wire = wire
	var err error
	switch wire {
	case WireAnthropic:
		err = anthropicInputs(&in, top)
	case WireOpenAI:
		err = openAIInputs(&in, top)
	case WireGemini:
		err = geminiInputs(&in, top)
	default:
		err = errors.New("cannot tell the request's shape: no messages, input or contents member (name the wire)")
	}
	if err != nil {
		return Inputs{}, err
	}
	return in, nil
}

// ShapeError is returned by InputsFromRequestBody when the wire named for a
// request (by the caller, or by the model's catalog entry) is not the shape
// of its body.
type ShapeError struct {
	// Wire is the wire named for the request.
	Wire Wire
	// Model is set when the wire came from the model's catalog entry.
	Model string
	// Body is the wire the body's members show (for a plain messages list,
	// Anthropic, though OpenAI Chat has the same shape).
	Body Wire
	// Shape describes the body's shape in words.
	Shape string
	// Evidence names the member or block that shows it.
	Evidence string
}

// Error names the mismatch.
func (e *ShapeError) Error() string {
	named := fmt.Sprintf("wire %s", e.Wire)
	if e.Model != "" {
		named = fmt.Sprintf("model %s is on the %s wire in the catalog, but", e.Model, e.Wire)
		return fmt.Sprintf("%s the body is %s request (%s); name the wire if a gateway takes this shape", named, e.Shape, e.Evidence)
	}
	return fmt.Sprintf("%s does not match the body: it is %s request (%s)", named, e.Shape, e.Evidence)
}

// shape is what a body's members tell about its wire.
type shape struct {
	wire     Wire   // the wire the members show (WireUnknown: none)
	definite bool   // the members rule every other wire out
	why      string // the member or block that shows it
}

// check returns a *ShapeError when the body cannot be a request of wire w:
// the members show another wire, or w's own list member is missing (Gemini
// needs contents; a messages-only body is Anthropic or OpenAI Chat).
func (sh shape) check(w Wire, model string) error {
	if sh.definite && sh.wire != w {
		return &ShapeError{Wire: w, Model: model, Body: sh.wire, Shape: sh.wire.title(), Evidence: sh.why}
	}
	if w == WireGemini && sh.wire != WireGemini && sh.wire != WireUnknown {
		return &ShapeError{Wire: w, Model: model, Body: sh.wire, Shape: "an Anthropic Messages or OpenAI Chat",
			Evidence: `member "messages", no "contents"`}
	}
	return nil
}

// title names a wire's request shape in messages.
func (w Wire) title() string {
	switch w {
	case WireAnthropic:
		return "an Anthropic Messages"
	case WireOpenAI:
		return "an OpenAI Chat or Responses"
	case WireGemini:
		return "a Gemini generateContent"
	}
	return "an unknown"
}

// bodyShape reads the members and blocks only one family uses; a plain
// messages list is taken for Anthropic, without ruling OpenAI Chat out.
func bodyShape(top map[string]json.RawMessage) shape {
	msgs, hasMessages := top["messages"]
	if _, ok := top["contents"]; ok {
		return shape{WireGemini, true, `member "contents"`}
	}
	if _, ok := top["input"]; ok && !hasMessages {
		return shape{WireOpenAI, true, `member "input" of the Responses API`}
	}
	if !hasMessages {
		return shape{}
	}
	for _, k := range []string{"system", "anthropic_version", "thinking", "stop_sequences"} {
		if _, ok := top[k]; ok {
			return shape{WireAnthropic, true, fmt.Sprintf("member %q", k)}
		}
	}
	for _, k := range []string{"max_completion_tokens", "reasoning_effort", "response_format", "n"} {
		if _, ok := top[k]; ok {
			return shape{WireOpenAI, true, fmt.Sprintf("member %q", k)}
		}
	}
	var list []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(msgs, &list)
	for i, m := range list {
		switch m.Role {
		case "system", "developer", "tool", "function":
			return shape{WireOpenAI, true, fmt.Sprintf("message %d has role %q", i, m.Role)}
		}
		var blocks []struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			switch b.Type {
			case "tool_use", "tool_result", "image", "thinking", "redacted_thinking", "document":
				return shape{WireAnthropic, true, fmt.Sprintf("message %d has a %q block", i, b.Type)}
			case "image_url", "input_audio", "refusal", "file":
				return shape{WireOpenAI, true, fmt.Sprintf("message %d has a %q block", i, b.Type)}
			}
		}
	}
	return shape{WireAnthropic, false, `member "messages"`}
}

// jsonArray returns the elements of an array member (nil when absent or null).
func jsonArray(top map[string]json.RawMessage, key string) ([]json.RawMessage, error) {
	v, ok := top[key]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		return nil, fmt.Errorf("member %q is not an array: %w", key, err)
	}
	return list, nil
}

// tokenCount returns the first present member of keys as a non-negative int.
func tokenCount(top map[string]json.RawMessage, keys ...string) (int, error) {
	for _, k := range keys {
		v, ok := top[k]
		if !ok || string(v) == "null" {
			continue
		}
		var n int
		if err := json.Unmarshal(v, &n); err != nil || n < 0 {
			return 0, fmt.Errorf("member %q must be a non-negative integer", k)
		}
		return n, nil
	}
	return 0, nil
}

func jsonObject(v json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v, &m)
	return m
}

// systemText is a string member's value, or the texts of a list of blocks
// ({"text": ...}) or of a {"parts": [...]} holder joined by blank lines; any
// other shape is charged as the JSON sent.
func systemText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	type part struct {
		Text string `json:"text"`
	}
	var parts []part
	if json.Unmarshal(v, &parts) != nil {
		var holder struct {
			Parts []part `json:"parts"`
		}
		if json.Unmarshal(v, &holder) != nil {
			return string(v)
		}
		parts = holder.Parts
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Text
	}
	return strings.Join(texts, "\n\n")
}

func anthropicInputs(in *Inputs, top map[string]json.RawMessage) error {
	var err error
	if v, ok := top["system"]; ok {
		in.System = systemText(v)
	}
	if in.Tools, err = jsonArray(top, "tools"); err != nil {
		return err
	}
	if in.Messages, err = jsonArray(top, "messages"); err != nil {
		return err
	}
	if in.OutputReserve, err = tokenCount(top, "max_tokens"); err != nil {
		return err
	}
	if th := jsonObject(top["thinking"]); th != nil {
		if in.ThinkingBudget, err = tokenCount(th, "budget_tokens"); err != nil {
			return err
		}
	}
	return nil
}

func openAIInputs(in *Inputs, top map[string]json.RawMessage) error {
	var err error
	if in.Tools, err = jsonArray(top, "tools"); err != nil {
		return err
	}
	if v, ok := top["instructions"]; ok {
		in.System = systemText(v)
	}
	if v, ok := top["input"]; ok { // Responses API: a string or a list of items
		var s string
		if json.Unmarshal(v, &s) == nil {
			msg, _ := json.Marshal(map[string]string{"role": "user", "content": s})
			in.Messages = []json.RawMessage{msg}
		} else if in.Messages, err = jsonArray(top, "input"); err != nil {
			return err
		}
	} else if in.Messages, err = jsonArray(top, "messages"); err != nil {
		return err
	}
	liftSystemMessages(in)
	in.OutputReserve, err = tokenCount(top, "max_output_tokens", "max_completion_tokens", "max_tokens")
	return err
}

// liftSystemMessages moves OpenAI system and developer messages (Chat
// messages, Responses input items) out of the history into the system
// lane, after any instructions: they are the system prompt of the request,
// however the wire carries them.
func liftSystemMessages(in *Inputs) {
	kept := in.Messages[:0:0]
	texts := []string{}
	if in.System != "" {
		texts = append(texts, in.System)
	}
	for _, m := range in.Messages {
		var msg struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m, &msg) != nil || (msg.Role != "system" && msg.Role != "developer") || msg.Content == nil {
			kept = append(kept, m)
			continue
		}
		texts = append(texts, systemText(msg.Content))
	}
	in.Messages = kept
	in.System = strings.Join(texts, "\n\n")
}

func geminiInputs(in *Inputs, top map[string]json.RawMessage) error {
	var err error
	for _, k := range []string{"systemInstruction", "system_instruction"} {
		if v, ok := top[k]; ok {
			in.System = systemText(v)
		}
	}
	if in.Tools, err = jsonArray(top, "tools"); err != nil {
		return err
	}
	if in.Messages, err = jsonArray(top, "contents"); err != nil {
		return err
	}
	for _, k := range []string{"generationConfig", "generation_config"} {
		gc := jsonObject(top[k])
		if gc == nil {
			continue
		}
		if in.OutputReserve, err = tokenCount(gc, "maxOutputTokens", "max_output_tokens"); err != nil {
			return err
		}
		for _, tk := range []string{"thinkingConfig", "thinking_config"} {
			tc := jsonObject(gc[tk])
			if tc == nil {
				continue
			}
			// -1 asks for a dynamic budget: nothing extra is reserved, the
			// output envelope covers thinking on this wire.
			if v, ok := tc["thinkingBudget"]; ok && bytes.Equal(bytes.TrimSpace(v), []byte("-1")) {
				continue
			}
			if in.ThinkingBudget, err = tokenCount(tc, "thinkingBudget", "thinking_budget"); err != nil {
				return err
			}
		}
	}
	return nil
}
