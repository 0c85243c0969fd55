package window

// One test per charging rule of the catalog (issue 20, item 4) and per
// counting rule of issue 15 (items 3 and 4). Each asserts what a host
// relies on through Assess or InputsFromRequestBody, so that it reads the
// same before and after the rule.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/roundtrip"
	"github.com/ctxkit/ctxkit/tokens"
)

func history1(t *testing.T, model string, msg any) Assessment {
	t.Helper()
	return Assess(Inputs{Model: model, Messages: []json.RawMessage{raw(t, msg)}})
}

// Images and PDFs sent by URL or file id cost what the same media costs
// inline, on all three wires; a document whose pages cannot be counted is
// charged the most pages the model accepts.
func TestMediaByReferenceChargedLikeInline(t *testing.T) {
	inline := strings.Repeat("iVBORw0KGgo", 1000)
	for name, tc := range map[string]struct {
		model       string
		ref, inline any
		least       int // the history charge must reach this
	}{
		"anthropic image url": {"claude-sonnet-4-5",
			obj{"role": "user", "content": []any{obj{"type": "image", "source": obj{"type": "url", "url": "https://example.com/a.png"}}}},
			obj{"role": "user", "content": []any{imageBlock(len(inline))}}, 1600},
		"anthropic image file": {"claude-sonnet-4-5",
			obj{"role": "user", "content": []any{obj{"type": "image", "source": obj{"type": "file", "file_id": "file_011"}}}},
			obj{"role": "user", "content": []any{imageBlock(len(inline))}}, 1600},
		"anthropic document url": {"claude-sonnet-4-5",
			obj{"role": "user", "content": []any{obj{"type": "document", "source": obj{"type": "url", "url": "https://example.com/a.pdf"}}}},
			nil, 100 * 3000},
		"anthropic document file, 1M model": {"claude-sonnet-4-6",
			obj{"role": "user", "content": []any{obj{"type": "document", "source": obj{"type": "file", "file_id": "file_011"}}}},
			nil, 600 * 3000},
		"openai chat image url": {"gpt-4o",
			obj{"role": "user", "content": []any{obj{"type": "image_url", "image_url": obj{"url": "https://example.com/a.png"}}}},
			obj{"role": "user", "content": []any{obj{"type": "image_url", "image_url": obj{"url": "data:image/png;base64," + inline}}}}, 1445},
		"openai responses image file id": {"gpt-5",
			obj{"role": "user", "content": []any{obj{"type": "input_image", "file_id": "file-abc"}}},
			obj{"role": "user", "content": []any{obj{"type": "input_image", "image_url": "data:image/png;base64," + inline}}}, 1190},
		"openai chat file id": {"gpt-4o",
			obj{"role": "user", "content": []any{obj{"type": "file", "file": obj{"file_id": "file-abc"}}}},
			nil, 100 * 3000},
		"openai responses file url": {"gpt-5",
			obj{"role": "user", "content": []any{obj{"type": "input_file", "file_url": "https://example.com/a.pdf"}}},
			nil, 100 * 3000},
		"gemini image file uri": {"gemini-2.5-pro",
			obj{"role": "user", "parts": []any{obj{"fileData": obj{"mimeType": "image/png", "fileUri": "gs://b/a.png"}}}},
			obj{"role": "user", "parts": []any{obj{"inlineData": obj{"mimeType": "image/png", "data": inline}}}}, 3000},
		"gemini pdf file uri": {"gemini-2.5-pro",
			obj{"role": "user", "parts": []any{obj{"file_data": obj{"mime_type": "application/pdf", "file_uri": "gs://b/a.pdf"}}}},
			nil, 1000 * 258},
	} {
		got := history1(t, tc.model, tc.ref).Breakdown.History
		if got < tc.least || got > tc.least+50 {
			t.Errorf("%s: by reference charged %d, want %d", name, got, tc.least)
		}
		if tc.inline != nil {
			if want := history1(t, tc.model, tc.inline).Breakdown.History; got < want-20 || got > want+20 {
				t.Errorf("%s: by reference %d, inline %d", name, got, want)
			}
		}
	}
}

// An image the request declares small (OpenAI detail "low") costs the
// model's published low-detail figure, inline or by URL.
func TestDeclaredLowDetailImage(t *testing.T) {
	for _, url := range []string{"https://example.com/a.png", "data:image/png;base64," + strings.Repeat("QUJD", 100)} {
		low := history1(t, "gpt-4o", obj{"role": "user", "content": []any{obj{"type": "image_url", "image_url": obj{"url": url, "detail": "low"}}}})
		if h := low.Breakdown.History; h < 85 || h > 120 {
			t.Errorf("%.20s… detail low: history %d, want about 85", url, h)
		}
	}
}

// PDF pages are charged at the wire's figure: 258 on Gemini (documented
// per page), not 3,000.
func TestPDFPagesPerWire(t *testing.T) {
	doc := pdfBase64(t, 10)
	g := history1(t, "gemini-2.5-flash", obj{"role": "user", "parts": []any{obj{"inline_data": obj{"mime_type": "application/pdf", "data": doc}}}})
	if h := g.Breakdown.History; h < 2580 || h > 2700 {
		t.Errorf("gemini: 10 pages charged %d, want about 2,580", h)
	}
	a := history1(t, "claude-sonnet-4-5", obj{"role": "user", "content": []any{documentBlock(doc)}})
	if h := a.Breakdown.History; h < 30_000 || h > 30_100 {
		t.Errorf("anthropic: 10 pages charged %d, want about 30,000", h)
	}
}

// models whose provider publishes a larger per-image cost than the wire's
// default are charged it (OpenAI's patch models, gpt-4o-mini's tiles).
func TestPerModelImageFigures(t *testing.T) {
	img := obj{"role": "user", "content": []any{obj{"type": "image_url", "image_url": obj{"url": "data:image/png;base64," + strings.Repeat("QUJD", 100)}}}}
	for model, want := range map[string]int{"gpt-4.1-nano": 3779, "gpt-4.1-mini": 2489, "o4-mini": 2642, "gpt-5-nano": 3779, "gpt-4o-mini": 48169} {
		if h := history1(t, model, img).Breakdown.History; h < want || h > want+40 {
			t.Errorf("%s: image charged %d, want %d", model, h, want)
		}
	}
}

// Anthropic drops thinking from turns before the last user turn; in the
// current tool loop the thinking counts, and its signature costs its
// decoded bytes at 4 per token, not its base64 as text.
func TestAnthropicThinkingByTheDocumentedRule(t *testing.T) {
	sig := strings.Repeat("EqQBCkgIARABGAIiQL", 400) // 7,200 base64 characters, 5,400 bytes
	thinking := strings.Repeat("Let me check the retry policy first. ", 200)
	assistant := obj{"role": "assistant", "content": []any{
		obj{"type": "thinking", "thinking": thinking, "signature": sig},
		obj{"type": "tool_use", "id": "t1", "name": "read", "input": obj{"path": "retry.go"}},
	}}
	result := obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}}}
	plain := obj{"role": "assistant", "content": []any{obj{"type": "tool_use", "id": "t1", "name": "read", "input": obj{"path": "retry.go"}}}}
	c := tokens.Safe{}
	hist := func(msgs ...any) int {
		var rs []json.RawMessage
		for _, m := range msgs {
			rs = append(rs, raw(t, m))
		}
		return Assess(Inputs{Model: "claude-sonnet-4-5", Messages: rs}).Breakdown.History
	}
	base := hist(obj{"role": "user", "content": "fix it"}, plain, result)
	current := hist(obj{"role": "user", "content": "fix it"}, assistant, result)
	wantSig := 7200 / 4 * 3 / 4
	if got, want := current-base, c.Count(thinking)+c.Count("thinking")+wantSig; got < want-5 || got > want+10 {
		t.Errorf("current turn: thinking and signature charged %d, want %d (signature %d)", got, want, wantSig)
	}
	next := obj{"role": "user", "content": "now the tests"}
	if dropped, kept := hist(obj{"role": "user", "content": "fix it"}, assistant, result, next),
		hist(obj{"role": "user", "content": "fix it"}, plain, result, next); dropped-kept > 5 {
		t.Errorf("earlier turn: thinking charged %d more than none", dropped-kept)
	}
	// Redacted thinking in the current turn: its data at 4 bytes a token.
	redacted := obj{"role": "assistant", "content": []any{obj{"type": "redacted_thinking", "data": sig}, plain["content"].([]any)[0]}}
	if got := hist(obj{"role": "user", "content": "fix it"}, redacted, result) - base; got < wantSig || got > wantSig+10 {
		t.Errorf("redacted thinking charged %d, want about %d", got, wantSig)
	}
}

// OpenAI reasoning items: encrypted_content costs (decoded bytes − 650) / 4
// in the current tool loop (Codex's rule) and nothing once a user turn
// follows (reasoning is discarded between turns).
func TestOpenAIEncryptedReasoningByTheDocumentedRule(t *testing.T) {
	enc := strings.Repeat("gAAAAABo", 1000) // 8,000 base64 characters, 6,000 bytes
	items := func(tail ...any) []json.RawMessage {
		rs := []json.RawMessage{
			raw(t, obj{"role": "user", "content": "fix it"}),
			raw(t, obj{"type": "reasoning", "id": "rs_1", "summary": []any{}, "encrypted_content": enc}),
			raw(t, obj{"type": "function_call", "call_id": "c1", "name": "read", "arguments": `{"path":"a"}`}),
			raw(t, obj{"type": "function_call_output", "call_id": "c1", "output": "ok"}),
		}
		for _, m := range tail {
			rs = append(rs, raw(t, m))
		}
		return rs
	}
	withRe := Assess(Inputs{Model: "gpt-5", Messages: items()}).Breakdown.History
	msgs := items()
	without := Assess(Inputs{Model: "gpt-5", Messages: append(msgs[:1:1], msgs[2:]...)}).Breakdown.History
	want := (6000 - 650) / 4
	if got := withRe - without; got < want || got > want+12 {
		t.Errorf("current loop: encrypted reasoning charged %d, want about %d", got, want)
	}
	later := items(obj{"role": "user", "content": "thanks"})
	laterWithout := append(later[:1:1], later[2:]...)
	if d := Assess(Inputs{Model: "gpt-5", Messages: later}).Breakdown.History - Assess(Inputs{Model: "gpt-5", Messages: laterWithout}).Breakdown.History; d > 12 {
		t.Errorf("earlier turn: reasoning charged %d", d)
	}
}

// Gemini charges thought signatures sent back as input in every turn: by
// their decoded bytes, not as base64 text.
func TestGeminiThoughtSignatureByTheDocumentedRule(t *testing.T) {
	sig := strings.Repeat("CiIBVKhc7", 800) // 7,200 base64 characters
	part := func(withSig bool) json.RawMessage {
		p := obj{"functionCall": obj{"name": "read", "args": obj{"path": "a"}}}
		if withSig {
			p["thoughtSignature"] = sig
		}
		return raw(t, obj{"role": "model", "parts": []any{p}})
	}
	later := raw(t, obj{"role": "user", "parts": []any{obj{"text": "next question"}}})
	for _, tail := range [][]json.RawMessage{nil, {later}} {
		with := Assess(Inputs{Model: "gemini-2.5-pro", Messages: append([]json.RawMessage{part(true)}, tail...)}).Breakdown.History
		without := Assess(Inputs{Model: "gemini-2.5-pro", Messages: append([]json.RawMessage{part(false)}, tail...)}).Breakdown.History
		if want, got := 7200/4*3/4, with-without; got < want || got > want+10 {
			t.Errorf("signature charged %d, want about %d (tail %d)", got, want, len(tail))
		}
	}
}

// The system and developer messages of an OpenAI body are the request's
// system prompt: charged to the system lane, not the history.
func TestOpenAISystemMessageInTheSystemLane(t *testing.T) {
	for name, body := range map[string]string{
		"chat":      `{"model":"gpt-4o","messages":[{"role":"system","content":"You review Go code carefully."},{"role":"user","content":"hi"}]}`,
		"developer": `{"model":"gpt-5","messages":[{"role":"developer","content":[{"type":"text","text":"You review Go code carefully."}]},{"role":"user","content":"hi"}]}`,
		"responses": `{"model":"gpt-5","input":[{"role":"system","content":"You review Go code carefully."},{"role":"user","content":"hi"}]}`,
	} {
		in, err := InputsFromRequestBody([]byte(body), WireUnknown, "")
		if err != nil {
			t.Fatal(err)
		}
		a := Assess(in)
		if in.System != "You review Go code carefully." || a.HistoryMessages != 1 || a.Breakdown.System == 0 {
			t.Errorf("%s: system %q, %d history messages, system lane %d", name, in.System, a.HistoryMessages, a.Breakdown.System)
		}
	}
}

// Counts run on the decoded strings: the same text costs the same however
// the JSON spells it, and code is not charged for its escapes.
func TestCountsRunOnDecodedStrings(t *testing.T) {
	cjk := "上下文窗口的预算必须按解码后的文本计算，而不是按JSON的写法。"
	var escaped strings.Builder
	for _, r := range cjk {
		if r > 0x7f {
			escaped.WriteString(`\u` + hex4(r))
		} else {
			escaped.WriteRune(r)
		}
	}
	for name, pair := range map[string][2]string{
		"cjk":  {`{"role":"user","content":"` + cjk + `"}`, `{"role":"user","content":"` + escaped.String() + `"}`},
		"html": {`{"role":"user","content":"a <b> & c"}`, `{"role":"user","content":"a \u003cb\u003e \u0026 c"}`},
	} {
		for _, model := range []string{"claude-sonnet-4-5", "gpt-4o"} {
			plain := Assess(Inputs{Model: model, Messages: []json.RawMessage{json.RawMessage(pair[0])}})
			esc := Assess(Inputs{Model: model, Messages: []json.RawMessage{json.RawMessage(pair[1])}})
			if plain.Breakdown != esc.Breakdown {
				t.Errorf("%s on %s: plain %+v, escaped %+v", name, model, plain.Breakdown, esc.Breakdown)
			}
		}
	}
	// Go source in a tool result: charged about as its text, not as its
	// JSON spelling with \n, \t and \" escapes.
	code := strings.Repeat("\tif err != nil {\n\t\treturn fmt.Errorf(\"read %q: %w\", path, err)\n\t}\n", 200)
	msg := raw(t, obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": "t", "content": code}}})
	c := tokens.ForModel("gpt-4o")
	got := Assess(Inputs{Model: "gpt-4o", Messages: []json.RawMessage{msg}}).Breakdown.History
	if text := c.Count(code); got > text+30 {
		t.Errorf("code charged %d, its text is %d (JSON spelling %d)", got, text, c.Count(string(msg)))
	}
	// Tool schemas too: escaped and plain schemas cost the same.
	t1 := json.RawMessage(`{"name":"read","description":"读取文件 <path>"}`)
	t2 := json.RawMessage(`{"name":"read","description":"\u8bfb\u53d6\u6587\u4ef6 \u003cpath\u003e"}`)
	if a, b := Assess(Inputs{Model: "gpt-4o", Tools: []json.RawMessage{t1}}), Assess(Inputs{Model: "gpt-4o", Tools: []json.RawMessage{t2}}); a.Breakdown.ToolSchemas != b.Breakdown.ToolSchemas {
		t.Errorf("tool schema: plain %d, escaped %d", a.Breakdown.ToolSchemas, b.Breakdown.ToolSchemas)
	}
}

func pdfBase64(t *testing.T, pages int) string {
	t.Helper()
	return base64.StdEncoding.EncodeToString(buildPDF(pages, 0))
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf]})
}

// A Session's calibration follows the reports both ways and is reported:
// one under-estimated early request does not inflate every later estimate
// for good.
func TestSessionCalibrationMovesBothWays(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-5"})
	msgs := history(t, 4, strings.Repeat("some history ", 50))
	est := s.Assess(msgs).Breakdown.Total()
	if err := s.ObserveUsage(est*3, len(msgs)); err != nil {
		t.Fatal(err)
	}
	high := s.Calibration()
	for range 10 {
		if err := s.ObserveUsage(est*7/10, len(msgs)); err != nil {
			t.Fatal(err)
		}
	}
	low := s.Calibration()
	a := s.Assess(msgs)
	if high <= 1 || low >= 1 || low < 0.69 || a.Calibration != low {
		t.Fatalf("calibration after 3x: %v; after ten 0.7x reports: %v; reported %v", high, low, a.Calibration)
	}
}

// The compaction threshold: the budget is the window less the documented
// reserves, so a request at the trigger plus its output, tool result and
// margin fills the window exactly; on every catalog model of 100K tokens or
// more, with the default reserves, compaction waits until the content
// reaches 75% of the window (the input side for models with an input
// limit).
func TestCompactionThresholdAgainstTheReserves(t *testing.T) {
	for _, m := range DefaultCatalog().models {
		model := m.Match[0]
		a := Assess(Inputs{Model: model})
		side := a.Window
		if a.InputLimit > 0 {
			side = a.InputLimit
		}
		if got := a.Budget() + a.Reserves.Total(); a.InputLimit == 0 && got != a.Window {
			t.Errorf("%s: budget %d + reserves %d ≠ window %d", model, a.Budget(), a.Reserves.Total(), a.Window)
		}
		if a.Reserves.SafetyMargin != a.Window*SafetyMarginPercent/100 || a.Reserves.Output != min(m.MaxOutput, defaultOutputCap) {
			t.Errorf("%s: reserves %+v", model, a.Reserves)
		}
		if side >= 100_000 && a.Budget()*100 < side*75 {
			t.Errorf("%s: compaction at %d of %d (%d%%)", model, a.Budget(), side, a.Budget()*100/side)
		}
	}
	// The trigger fires exactly when usage reaches the budget.
	msgs := history(t, 4, "x")
	a := Assess(Inputs{Model: "claude-sonnet-4-5", Messages: msgs})
	at := Assess(Inputs{Model: "claude-sonnet-4-5", Messages: msgs, Window: a.Used() + a.Reserves.Total() - a.Reserves.SafetyMargin})
	w := at.Window
	// Solve for the window whose budget equals the usage (the margin is a
	// share of the window, so step up from below).
	for at.Budget() < at.Used() {
		w++
		at = Assess(Inputs{Model: "claude-sonnet-4-5", Messages: msgs, Window: w})
	}
	if at.Budget() == at.Used() && !at.ShouldCompact() {
		t.Errorf("usage %d at budget %d: no compaction", at.Used(), at.Budget())
	}
	above := Assess(Inputs{Model: "claude-sonnet-4-5", Messages: msgs, Window: w + 100})
	if above.ShouldCompact() {
		t.Errorf("usage %d under budget %d: compaction", above.Used(), above.Budget())
	}
	// A request's own max_tokens is reserved in full (Anthropic refuses
	// input + max_tokens over the window).
	if r := Assess(Inputs{Model: "claude-sonnet-4-5", OutputReserve: 64_000}); r.Reserves.Output != 64_000 {
		t.Errorf("requested output reserved %d", r.Reserves.Output)
	}
}

// A wire that does not fit the body's shape is an error naming the
// mismatch, not an assessment of nothing.
func TestWireThatDoesNotFitTheBodyIsAnError(t *testing.T) {
	openAI := `{"model":"gpt-4o","messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"}]}`
	gemini := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	plain := `{"messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		body  string
		wire  Wire
		model string
		want  string
	}{
		{openAI, WireGemini, "", `wire gemini does not match the body: it is an OpenAI Chat or Responses request (message 0 has role "system")`},
		{openAI, WireAnthropic, "", `wire anthropic does not match the body`},
		{gemini, WireOpenAI, "", `it is a Gemini generateContent request (member "contents")`},
		{plain, WireGemini, "", `no "contents"`},
		{gemini, WireUnknown, "claude-sonnet-4-5", `model claude-sonnet-4-5 is on the anthropic wire in the catalog, but the body is a Gemini generateContent request`},
	} {
		_, err := InputsFromRequestBody([]byte(tc.body), tc.wire, tc.model)
		var se *ShapeError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s as %s: %v, want %q", tc.body, tc.wire, err, tc.want)
		}
	}
	// Bodies that fit are read, also a plain messages list as OpenAI.
	for _, w := range []Wire{WireOpenAI, WireAnthropic} {
		if _, err := InputsFromRequestBody([]byte(plain), w, ""); err != nil {
			t.Errorf("plain messages as %s: %v", w, err)
		}
	}
}

// An unknown model is assessed with the documented defaults, and says so.
func TestUnknownModelWarns(t *testing.T) {
	a := Assess(Inputs{Model: "mystery-9", Messages: history(t, 1, "hi")})
	if a.Window != DefaultWindow || len(a.Warnings) != 1 ||
		!strings.Contains(a.Warnings[0], "model mystery-9 is not in the catalog: assumed window 128000") {
		t.Fatalf("window %d, warnings %q", a.Window, a.Warnings)
	}
	b, _ := json.Marshal(a)
	if !strings.Contains(string(b), `"warnings":["model mystery-9 is not in the catalog`) {
		t.Fatalf("JSON lacks the warning: %s", b)
	}
	if k := Assess(Inputs{Model: "claude-sonnet-4-5"}); len(k.Warnings) != 0 {
		t.Fatalf("known model warned: %q", k.Warnings)
	}
}

// Every wire rule and every per-model figure of the embedded catalog cites
// its source.
func TestCatalogCitesEveryRule(t *testing.T) {
	cat := DefaultCatalog()
	for _, w := range []Wire{WireUnknown, WireAnthropic, WireOpenAI, WireGemini} {
		r := cat.rules(w)
		for _, k := range []string{"image_tokens", "page_tokens", "max_pages", "opaque_bytes_per_token"} {
			if !strings.HasPrefix(r.Sources[k], "https://") {
				t.Errorf("wire %s: rule %s has no source", w, k)
			}
		}
		if w != WireUnknown && r.Sources["prior_reasoning"] == "" {
			t.Errorf("wire %s: prior_reasoning has no source", w)
		}
	}
	for _, m := range cat.models {
		for k, v := range map[string]int{"image_tokens": m.ImageTokens, "image_low_tokens": m.ImageLowTokens, "page_tokens": m.PageTokens, "max_pages": m.MaxPages} {
			if v != 0 && m.Sources[k] == "" {
				t.Errorf("model %s: %s %d has no source", m.Name, k, v)
			}
		}
	}
	if _, err := LoadCatalog(strings.NewReader(`{"models":[{"name":"x","match":["x"],"wire":"openai","window":10,"max_output":1,"sources":{"window":"ftp://x"}}]}`)); !errors.Is(err, ErrInvalidCatalog) {
		t.Errorf("a source that is not an https URL was accepted: %v", err)
	}
}

// An Assessment read back from its JSON equals the one written (what
// `assess --remote` relies on to print the local command's bytes).
func TestAssessmentJSONRoundTrips(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "gpt-5"})
	msgs := history(t, 6, "some text")
	s.Assess(msgs)
	if err := s.ObserveUsage(100, 4); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Assessment{
		s.Assess(msgs),
		Assess(Inputs{Model: "mystery", Window: -1, Messages: append(msgs, json.RawMessage(`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"low"}}]}`))}),
		Assess(Inputs{Model: "gemini-2.5-pro", ThinkingBudget: 10}),
	} {
		roundtrip.JSON[Assessment](t, a)
	}
}

// The fast path for large payloads charges opaque reasoning as the full
// decode does, also when the JSON escapes the payload's slashes.
func TestOpaquePayloadFastPathAgreesWithFull(t *testing.T) {
	sig := strings.Repeat("ab/cd+ef", 2000)
	// Escapes past the first elidePrefix bytes, so that the literal is
	// elided.
	for _, lit := range []string{sig, sig[:200] + strings.ReplaceAll(sig[200:], "/", `\/`)} {
		msg := []byte(`{"role":"assistant","content":[{"type":"thinking","thinking":"` + strings.Repeat("hm ", 3000) + `","signature":"` + lit + `"}]}`)
		fast, full := estimateMessage(tokens.Safe{}, msg, testCharges), estimateFull(tokens.Safe{}, msg, testCharges)
		if fast != full || fast.reasoning == 0 {
			t.Fatalf("fast %+v, full %+v", fast, full)
		}
	}
}

// Messages passed to Assess or a Session as the OpenAI wire sends them
// carry the system prompt as a message: it is charged to the system lane
// and does not count as history.
func TestOpenAISystemMessagePassedAsAMessage(t *testing.T) {
	msgs := []json.RawMessage{
		json.RawMessage(`{"role":"system","content":"You review Go code carefully."}`),
		json.RawMessage(`{"role":"user","content":"hi"}`),
	}
	a := Assess(Inputs{Model: "gpt-4o", Messages: msgs})
	if a.HistoryMessages != 1 || a.Breakdown.System == 0 || a.Breakdown.Framing != FramingTokensPerMessage {
		t.Fatalf("%d history messages, lanes %+v", a.HistoryMessages, a.Breakdown)
	}
	if s := NewSession(&SessionOptions{Model: "gpt-4o"}).Assess(msgs); s.Breakdown != a.Breakdown {
		t.Fatalf("session %+v, assess %+v", s.Breakdown, a.Breakdown)
	}
	// On Anthropic a system-role message is not the system prompt.
	if c := Assess(Inputs{Model: "claude-sonnet-4-5", Messages: msgs}); c.HistoryMessages != 2 || c.Breakdown.System != 0 {
		t.Fatalf("anthropic: %d history messages, lanes %+v", c.HistoryMessages, c.Breakdown)
	}
}

// TestCatalogRulesCarrySources: each wire's charging rules come from the
// catalog with the source of each figure (Gemini's page charge here).
func TestCatalogRulesCarrySources(t *testing.T) {
	r := DefaultCatalog().rules(WireGemini)
	if r.PageTokens != 258 || r.MaxPages != 1000 || r.PriorReasoning != "charged" {
		t.Errorf("gemini rules: %d tokens per page, up to %d pages, earlier reasoning %s", r.PageTokens, r.MaxPages, r.PriorReasoning)
	}
	if got, want := r.Sources["page_tokens"], "https://ai.google.dev/gemini-api/docs/document-processing"; got != want {
		t.Errorf("page_tokens source = %q, want %q", got, want)
	}
}
