package window

// Tests ported from the seed design (agent_engine/runtime/context.rs),
// in Go idiom. Where the issue changed the semantics the test says why.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/tokens"
)

func raw(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type obj = map[string]any

func imageBlock(n int) obj {
	return obj{"type": "image", "source": obj{"type": "base64", "media_type": "image/png", "data": strings.Repeat("A", n)}}
}

// textCount counts, with c, the decoded text of every key and scalar of
// the JSON value b: what a message without media is charged.
func textCount(t testing.TB, c tokens.Counter, b []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) int
	walk = func(v any) int {
		switch x := v.(type) {
		case map[string]any:
			n := 0
			for k, child := range x {
				n += c.Count(k) + walk(child)
			}
			return n
		case []any:
			n := 0
			for _, child := range x {
				n += walk(child)
			}
			return n
		case string:
			return c.Count(x)
		case json.Number:
			return c.Count(string(x))
		case nil:
			return c.Count("null")
		}
		return c.Count(fmt.Sprint(v))
	}
	return walk(v)
}

func historyTokensOf(messages []json.RawMessage) int {
	return Assess(Inputs{Model: "claude-sonnet-4-6", Window: 200_000, Messages: messages}).Breakdown.History
}

func TestImageBlockInToolResultChargedFlat(t *testing.T) {
	msgs := []json.RawMessage{raw(t, obj{"role": "user", "content": []any{obj{
		"type": "tool_result", "tool_use_id": "toolu_1",
		"content": []any{
			obj{"type": "text", "text": "Image: /tmp/x.png (1024x1536, image/png, 2292 KB)"},
			imageBlock(3_000_000),
		},
	}}})}
	n := historyTokensOf(msgs)
	if n < 1600 || n > 1600+200 {
		t.Fatalf("history = %d, want 1600..1800", n)
	}
}

func TestUserMessageImageChargedFlat(t *testing.T) {
	msgs := []json.RawMessage{raw(t, obj{"role": "user", "content": []any{
		obj{"type": "text", "text": "what is this?"}, imageBlock(3_000_000),
	}})}
	n := historyTokensOf(msgs)
	if n < 1600 || n > 1600+200 {
		t.Fatalf("history = %d, want 1600..1800", n)
	}
}

// Seed: string_content_unchanged and array_content_without_images_unchanged.
// A message without images is charged exactly on its decoded text (every
// key and scalar), on the scanning path and on the decoding path alike.
func TestMessagesWithoutImagesAreChargedOnTheirDecodedText(t *testing.T) {
	c := tokens.ForModel("claude-sonnet-4-6")
	for _, m := range []any{
		obj{"role": "user", "content": "plain string content, no blocks here"},
		obj{"role": "assistant", "content": []any{
			obj{"type": "text", "text": "let me look"},
			obj{"type": "tool_use", "id": "toolu_1", "name": "read", "input": obj{"path": "x"}},
		}},
		obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": "1\tfoo\n2\tbar"}}},
		obj{"role": "user", "content": []any{obj{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{
			obj{"type": "text", "text": "nested text only"},
		}}}},
		// Mentions base64 in text, so it takes the decoding path, but holds no image.
		obj{"role": "user", "content": "how do I decode base64 in Go?"},
	} {
		b := raw(t, m)
		got := estimateMessage(c, b, testCharges)
		if want := textCount(t, c, b); got.tokens != want || got.images != 0 || got.invalid {
			t.Errorf("%s: estimate %+v, decoded text %d", b, got, want)
		}
		if tree, ok := estimateTree(c, b, testCharges, payloads{}); !ok || tree.tokens != got.tokens {
			t.Errorf("%s: decoding path %+v, scanning path %+v", b, tree, got)
		}
	}
}

func TestNonImageBlocksStillChargedByPayload(t *testing.T) {
	m := raw(t, obj{"role": "user", "content": []any{obj{"type": "text", "text": strings.Repeat("A", 100_000)}}})
	if got := estimateMessage(tokens.ForModel("claude-sonnet-4-6"), m, testCharges).tokens; got <= 10_000 {
		t.Fatalf("100 KB text block charged %d tokens", got)
	}
}

func TestTinyWindowNeverUnderflowsAndFailsTowardCompaction(t *testing.T) {
	var msgs []json.RawMessage
	for i := range MinCompactionMessages {
		msgs = append(msgs, raw(t, obj{"role": "user", "content": fmt.Sprintf("m%d", i)}))
	}
	a := Assess(Inputs{Model: "claude-sonnet-4-6", Window: 10, Messages: msgs, ThinkingBudget: 1000})
	if a.Budget() != 0 || a.Remaining() != 0 || !a.ShouldCompact() {
		t.Fatalf("budget %d remaining %d compact %v", a.Budget(), a.Remaining(), a.ShouldCompact())
	}
}

// Anthropic-wire requests spend thinking from max_tokens: thinking is
// reserved exactly once, inside the output envelope.
func TestAnthropicWireCountsThinkingOnceInsideTheOutputReserve(t *testing.T) {
	const window = 200_000
	margin := window * SafetyMarginPercent / 100
	in := Inputs{Model: "claude-sonnet-4-6", Window: window, Messages: []json.RawMessage{raw(t, obj{"role": "user", "content": "hi"})},
		ThinkingBudget: 8_000, OutputReserve: 64_000}
	a := Assess(in)
	if a.Reserves.Accounting != InsideOutput || a.Reserves.Thinking != 0 || a.Reserves.Output != 64_000 {
		t.Fatalf("reserves %+v", a.Reserves)
	}
	if got, want := a.Budget(), window-(64_000+margin); got != want {
		t.Fatalf("budget %d, want %d", got, want)
	}
	// A thinking budget larger than the requested output governs the envelope.
	in.ThinkingBudget = 100_000
	a = Assess(in)
	if a.Reserves.Output != 100_000 || a.Reserves.Thinking != 0 {
		t.Fatalf("reserves %+v", a.Reserves)
	}
}

// OpenAI Responses/Chat wires bill reasoning inside the output cap too.
// Adapted: the seed skipped xai-auth/grok-4 when its catalog lacked it;
// ours catalogues grok-4 on the OpenAI-compatible wire, so nothing is
// skipped.
func TestOpenAIWiresAccountReasoningInsideTheOutputReserve(t *testing.T) {
	for _, model := range []string{"openai-codex/gpt-5.2-codex", "xai-auth/grok-4", "gpt-4o"} {
		a := Assess(Inputs{Model: model, ThinkingBudget: 8_000, OutputReserve: 4_000})
		if a.Wire != WireOpenAI || a.Reserves.Accounting != InsideOutput || a.Reserves.Thinking != 0 || a.Reserves.Output != 8_000 {
			t.Errorf("%s: wire %s reserves %+v", model, a.Wire, a.Reserves)
		}
	}
}

// Adapted: the seed reserved thinking separately on Gemini. The issue
// (budget.md §2) found that Gemini's maxOutputTokens caps thoughts and
// answer together, so Gemini now reserves one envelope like Anthropic and
// OpenAI; only unknown models still reserve both (conservative).
func TestGeminiInsideOutputAndUnknownModelsReserveThinkingSeparately(t *testing.T) {
	const window = 200_000
	margin := window * SafetyMarginPercent / 100
	msgs := []json.RawMessage{raw(t, obj{"role": "user", "content": "hi"})}
	g := Assess(Inputs{Model: "google-gemini/gemini-2.5-pro", Window: window, Messages: msgs, ThinkingBudget: 8_000, OutputReserve: 64_000})
	if g.Wire != WireGemini || g.Reserves.Accounting != InsideOutput || g.Reserves.Thinking != 0 || g.Reserves.Output != 64_000 {
		t.Fatalf("gemini: wire %s reserves %+v", g.Wire, g.Reserves)
	}
	if got, want := g.Budget(), window-(64_000+margin); got != want {
		t.Fatalf("gemini budget %d, want %d", got, want)
	}
	u := Assess(Inputs{Model: "totally/unroutable-model", Window: window, Messages: msgs, ThinkingBudget: 8_000, OutputReserve: 64_000})
	if u.Reserves.Accounting != SeparateFromOutput || u.Reserves.Thinking != 8_000 || u.Reserves.Output != 64_000 {
		t.Fatalf("unknown: reserves %+v", u.Reserves)
	}
	if got, want := u.Budget(), window-(8_000+64_000+margin); got != want {
		t.Fatalf("unknown budget %d, want %d", got, want)
	}
}

// Seed: runtime_assessment_matches_engine_calculation. Session.Assess is
// the same calculation as Assess on the session's own segments.
func TestSessionAssessmentMatchesAssess(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6", ProjectID: "proj"})
	s.Update(func(in *Inputs) {
		in.System = "shared system prompt for budget parity"
		in.Window = 200_000
		in.Tools = []json.RawMessage{raw(t, obj{"name": "read", "description": "read a file", "input_schema": obj{"type": "object"}})}
		in.ThinkingBudget = 4_000
		in.NextToolResultBytes = 30_000
	})
	msgs := []json.RawMessage{
		raw(t, obj{"role": "user", "content": "hello 你好 😀"}),
		raw(t, obj{"role": "assistant", "content": []any{obj{"type": "text", "text": `fn main() { println!("hi"); }`}}}),
	}
	via := s.Assess(msgs)
	direct := Assess(s.Inputs(msgs))
	if !reflect.DeepEqual(via, direct) {
		t.Fatalf("session %+v\nassess  %+v", via, direct)
	}
	if via.Reserves.Output <= 0 {
		t.Error("output reserve must be model-derived")
	}
	if via.Breakdown.System <= 0 || via.Breakdown.ToolSchemas <= 0 {
		t.Error("system and tool segments must be accounted")
	}
	// Parity holds on every later call too, cached or not.
	msgs = append(msgs, raw(t, obj{"role": "user", "content": "and again"}))
	if via, direct := s.Assess(msgs), Assess(s.Inputs(msgs)); !reflect.DeepEqual(via, direct) {
		t.Fatalf("after append: session %+v\nassess  %+v", via, direct)
	}
}

func memoryContribution(project, rendered string) MemoryContribution {
	return MemoryContribution{ProjectID: project, ProviderID: "axel-memory", Rendered: rendered}
}

// A held memory contribution is charged exactly to the memory lane; every
// other lane, the reserves and the budget are untouched; clearing it
// restores the assessment exactly.
func TestMemoryContributionChargesOnlyTheMemoryLaneAndNeverReserves(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6", ProjectID: "proj"})
	s.Update(func(in *Inputs) {
		in.System = "system prompt for the memory budget test"
		in.Window = 200_000
	})
	msgs := []json.RawMessage{
		raw(t, obj{"role": "user", "content": "what auth model do we use?"}),
		raw(t, obj{"role": "assistant", "content": "let me check"}),
	}
	without := s.Assess(msgs)
	if without.Breakdown.Memory != 0 {
		t.Fatal("memory lane not empty")
	}
	rendered := "[memory — lower-authority project data; verify before relying]\n" +
		"1. mem-0001 — Decision — the project uses session-scoped authorization rather than persisted grants."
	if err := s.HoldMemoryContribution(memoryContribution("proj", rendered)); err != nil {
		t.Fatal(err)
	}
	with := s.Assess(msgs)
	// Adapted: the seed compared with its conservative estimator; the lane
	// carries the session's counter (Safe for Claude models).
	want := tokens.Safe{}.Count(rendered)
	if want == 0 || with.Breakdown.Memory != want {
		t.Fatalf("memory lane %d, want %d", with.Breakdown.Memory, want)
	}
	if with.Reserves != without.Reserves || with.Budget() != without.Budget() {
		t.Fatal("memory moved the reserves or the budget")
	}
	wb, ob := with.Breakdown, without.Breakdown
	wb.Memory = 0
	if wb != ob || with.HistoryMessages != without.HistoryMessages {
		t.Fatalf("other lanes moved: %+v vs %+v", with.Breakdown, without.Breakdown)
	}
	if with.Used() != without.Used()+want || with.Remaining() != without.Remaining()-want {
		t.Fatal("usage did not move by exactly the memory estimate")
	}
	if with.ShouldCompact() != (with.HistoryMessages >= MinCompactionMessages && with.Used() >= with.Budget()) {
		t.Fatal("trigger does not key off the same budget")
	}
	s.ClearMemoryContribution()
	if cleared := s.Assess(msgs); !reflect.DeepEqual(cleared, without) {
		t.Fatalf("cleared %+v\nwithout %+v", cleared, without)
	}
}

// A contribution for another project is refused at hold time with a typed
// error and never reaches the budget lane.
func TestForeignProjectContributionIsRefusedAndNeverBudgeted(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6", ProjectID: "proj"})
	s.Update(func(in *Inputs) { in.Window = 200_000 })
	err := s.HoldMemoryContribution(memoryContribution("project-not-this-host", "foreign project memory"))
	var mismatch *ProjectMismatchError
	if !errorsAs(err, &mismatch) || mismatch.Contribution != "project-not-this-host" || mismatch.Session != "proj" {
		t.Fatalf("err = %v", err)
	}
	a := s.Assess([]json.RawMessage{raw(t, obj{"role": "user", "content": "hi"})})
	if a.Breakdown.Memory != 0 {
		t.Fatalf("refused contribution budgeted: %d", a.Breakdown.Memory)
	}
	// A session without a project refuses every contribution.
	if err := NewSession(nil).HoldMemoryContribution(memoryContribution("", "x")); !errorsAs(err, &mismatch) {
		t.Fatalf("project-less session accepted a contribution: %v", err)
	}
}
