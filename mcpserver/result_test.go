package mcpserver

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// viaJSON is s after a trip through encoding/json (invalid UTF-8 becomes
// U+FFFD, byte by byte).
func viaJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back string
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// randomText mixes what JSON must escape, what HTML escaping would touch,
// multi-byte runes and invalid UTF-8.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", " ", "\n", "\t", `"`, `\`, "<", ">", "&", "\u2028", "é", "🙂", "\x00", "\x1f", "\xff", "</frame>", `\"`}
	var b strings.Builder
	for range r.IntN(40) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestEncodedResultMatchesSDK checks the hand-written wire form against the
// SDK's own encoding of the same result, for texts full of characters JSON
// escapes, with and without structured content, isError, _meta and the
// per-request protocol's resultType.
func TestEncodedResultMatchesSDK(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 1))
	for i := range 500 {
		text := randomText(r)
		e := &encodedResult{text: jsonString(text), isError: i%3 == 0, complete: i%4 == 0}
		if i%2 == 0 {
			e.structured = json.RawMessage(`{"prompt":` + string(jsonString(text)) + `,"n":[1,2,{"k":null}]}`)
		}
		if i%5 == 0 {
			e.Meta = mcp.Meta{mcp.MetaKeyServerInfo: map[string]any{"name": "ctxkit", "version": randomText(r)}}
		}
		got, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		sdk, err := e.callToolResult()
		if err != nil {
			t.Fatal(err)
		}
		if sdk.Content[0].(*mcp.TextContent).Text != viaJSON(t, text) {
			t.Fatalf("text %q decoded as %q", text, sdk.Content[0].(*mcp.TextContent).Text)
		}
		sdk.Meta = e.Meta
		want, err := json.Marshal(sdk)
		if err != nil {
			t.Fatal(err)
		}
		if e.complete {
			want = append(want[:len(want)-1], `,"resultType":"complete"}`...)
		}
		if !sameJSON(t, got, want) {
			t.Fatalf("text %q:\n got  %s\n want %s", text, got, want)
		}
		var back mcp.CallToolResult
		if err := json.Unmarshal(got, &back); err != nil || back.IsError != e.isError {
			t.Fatalf("the SDK reads %s back as %+v: %v", got, back, err)
		}
	}
}

// TestEncodedResultNoHTMLEscapes checks that the prompt reaches the client
// with its fence characters as they are, not as six-byte \u003c escapes.
func TestEncodedResultNoHTMLEscapes(t *testing.T) {
	b, err := (&encodedResult{text: jsonString(`<frame provider="files">x & y</frame>`)}).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `\u003c`) || !strings.Contains(string(b), `<frame provider=\"files\">x & y</frame>`) {
		t.Fatalf("encoded %s", b)
	}
}

func TestPromptMember(t *testing.T) {
	for _, prompt := range []string{"", `"`, `\`, `a\"b`, `\\"`, "line\nline", "<x>&", "é🙂"} {
		obj, err := json.Marshal(map[string]any{"prompt": prompt})
		if err != nil {
			t.Fatal(err)
		}
		obj = append(obj[:len(obj)-1], `,"citations":["\"}"]}`...)
		var got string
		if err := json.Unmarshal(promptMember(obj, prompt), &got); err != nil || got != prompt {
			t.Errorf("prompt %q: member %s = %q, %v", prompt, promptMember(obj, prompt), got, err)
		}
	}
	// An object that does not lead with the prompt is not sliced.
	if got := string(promptMember([]byte(`{"citations":[],"prompt":"p"}`), "q")); got != `"q"` {
		t.Errorf("got %s, want the prompt encoded anew", got)
	}
}

func FuzzPromptMember(f *testing.F) {
	f.Add("", "")
	f.Add(`a"b`, `x\`)
	f.Add("line\n\\\"", "</frame>")
	f.Fuzz(func(t *testing.T, prompt, other string) {
		obj, err := json.Marshal(struct {
			Prompt string `json:"prompt"`
			Other  string `json:"other"`
		}{prompt, other})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := json.Unmarshal(promptMember(obj, prompt), &got); err != nil || got != viaJSON(t, prompt) {
			t.Fatalf("prompt %q: %q, %v", prompt, got, err)
		}
	})
}

// TestPromptResultMatchesDecoding: promptResult's text is the answer's
// "prompt" member as decoding the answer finds it, whether the answer
// leads with it (sliced out) or not (decoded), and an answer without a
// string prompt is refused.
func TestPromptResultMatchesDecoding(t *testing.T) {
	answers := []string{
		`{"prompt":"a\"b\\\\","citations":["\"}"]}`,
		`{"prompt":"","audit":{}}`,
		`{"citations":[],"prompt":"late \"one\""}`,
	}
	for _, a := range answers {
		var want struct {
			Prompt json.RawMessage `json:"prompt"`
		}
		if err := json.Unmarshal([]byte(a), &want); err != nil {
			t.Fatal(err)
		}
		structured, text, err := promptResult([]byte(a))
		if err != nil || string(text) != string(want.Prompt) || string(structured) != a {
			t.Errorf("%s: text %s, structured %s, %v; want text %s", a, text, structured, err, want.Prompt)
		}
	}
	for _, a := range []string{`{"citations":[]}`, `{"prompt":1}`} {
		if _, _, err := promptResult([]byte(a)); err == nil {
			t.Errorf("%s: no error", a)
		}
	}
}

// TestEncodedResultOneBuffer: the encoding is written into the buffer
// sized for it at the start, whichever members are set: a buffer that
// had to grow would have another capacity.
func TestEncodedResultOneBuffer(t *testing.T) {
	text := jsonString(strings.Repeat("fenced evidence\n", 1000))
	structured := json.RawMessage(`{"prompt":` + string(text) + `,"citations":[],"audit":{}}`)
	meta := mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: "ctxkit", Version: "dev"}}
	metaBytes, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	for mask := range 16 {
		r := &encodedResult{text: text, isError: mask&1 != 0, complete: mask&2 != 0}
		want := len(text) + resultFraming
		if mask&4 != 0 {
			r.structured = structured
			want += len(structured)
		}
		if mask&8 != 0 {
			r.Meta = meta
			want += len(metaBytes)
		}
		b, err := r.MarshalJSON()
		if err != nil || !json.Valid(b) {
			t.Fatalf("members %04b: %v, or not JSON: %.200s", mask, err, b)
		}
		if cap(b) != want {
			t.Errorf("members %04b: a buffer of capacity %d for %d bytes, want the %d sized at the start", mask, cap(b), len(b), want)
		}
	}
}
