package main

import (
	"reflect"
	"testing"

	"github.com/ctxkit/ctxkit/window"
)

// FuzzAssessBodyParity checks that window.InputsFromRequestBody, which
// POST /v1/assess reads bodies with, reads every body exactly as
// `ctxkit assess` does.
func FuzzAssessBodyParity(f *testing.F) {
	for _, s := range []string{
		`{"model":"claude-sonnet-4-5","system":"be brief","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":2048},"tools":[{"name":"t","input_schema":{}}],"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"x","system":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"AAAA"}}]}]}`,
		`{"model":"gpt-4o","messages":[{"role":"system","content":"s"},{"role":"user","content":"q"}],"max_completion_tokens":500}`,
		`{"model":"o3","instructions":"be kind","input":"hello","max_output_tokens":77}`,
		`{"input":[{"role":"user","content":"x"}],"tools":[]}`,
		`{"model":"gemini-2.5-pro","systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"q"}]}],"generationConfig":{"maxOutputTokens":900,"thinkingConfig":{"thinkingBudget":-1}}}`,
		`{"contents":[],"generation_config":{"max_output_tokens":5,"thinking_config":{"thinking_budget":9}}}`,
		`{"messages":[{"role":"tool","content":"r"}],"max_tokens":-1}`,
		`{"messages":"nope"}`, `{}`, `[]`, `{"model":7,"messages":[]}`,
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":"x"}],"contents":[]}`), "openai")
	f.Add([]byte(`{"messages":[]}`), "gemini")
	f.Fuzz(func(t *testing.T, body []byte, wireName string) {
		wire, err := window.ParseWire(wireName)
		if err != nil {
			return
		}
		want, werr := parseRequest(body, wire, "")
		got, gerr := window.InputsFromRequestBody(body, wire, "")
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("cli: %v; window: %v; body %q", werr, gerr, body)
		}
		if werr != nil {
			return
		}
		cli := window.Inputs{Model: want.model, Wire: want.wire, System: want.system, Tools: want.tools,
			Messages: want.messages, ThinkingBudget: want.thinking, OutputReserve: want.output}
		if !reflect.DeepEqual(cli, got) {
			t.Fatalf("cli reads %+v\nwindow reads %+v\nbody %q", cli, got, body)
		}
	})
}
