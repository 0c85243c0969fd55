package window

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxkit/ctxkit/tokens"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// countingCounter counts how many bytes it was asked to count.
type countingCounter struct {
	tokens.Counter
	bytes atomic.Int64
}

func (c *countingCounter) Count(s string) int {
	c.bytes.Add(int64(len(s)))
	return c.Counter.Count(s)
}

func TestImagesAreChargedFlatInEveryWireShape(t *testing.T) {
	payload := strings.Repeat("iVBORw0KGgo", 200_000) // ~2.2 MB of base64
	for name, tc := range map[string]struct {
		model string
		msg   any
		want  int
	}{
		"openai chat data URL": {"gpt-4o", obj{"role": "user", "content": []any{
			obj{"type": "text", "text": "describe"},
			obj{"type": "image_url", "image_url": obj{"url": "data:image/png;base64," + payload, "detail": "high"}},
		}}, 1445},
		"openai responses input_image": {"gpt-5", obj{"role": "user", "content": []any{
			obj{"type": "input_image", "image_url": "data:image/jpeg;base64," + payload},
		}}, 1190},
		"gemini inline_data": {"gemini-2.5-pro", obj{"role": "user", "parts": []any{
			obj{"text": "what is this"}, obj{"inline_data": obj{"mime_type": "image/png", "data": payload}},
		}}, 3000},
		"gemini inlineData camelCase": {"gemini-2.5-flash", obj{"role": "user", "parts": []any{
			obj{"inlineData": obj{"mimeType": "image/webp", "data": payload}},
		}}, 3000},
		"anthropic nested twice": {"claude-opus-4-5", obj{"role": "user", "content": []any{
			obj{"type": "tool_result", "tool_use_id": "t", "content": []any{imageBlock(len(payload)), imageBlock(len(payload))}},
		}}, 3200},
	} {
		a := Assess(Inputs{Model: tc.model, Messages: []json.RawMessage{raw(t, tc.msg)}})
		if a.Breakdown.History < tc.want || a.Breakdown.History > tc.want+150 {
			t.Errorf("%s: history %d, want about %d", name, a.Breakdown.History, tc.want)
		}
		if a.Images*a.ImageTokens != tc.want {
			t.Errorf("%s: %d images at %d", name, a.Images, a.ImageTokens)
		}
	}
}

func TestImageChargeIsConfigurable(t *testing.T) {
	msgs := []json.RawMessage{raw(t, obj{"role": "user", "content": []any{imageBlock(1000)}})}
	a := Assess(Inputs{Model: "claude-sonnet-4-6", Messages: msgs, ImageTokens: 4784})
	if a.ImageTokens != 4784 || a.Breakdown.History < 4784 {
		t.Fatalf("image tokens %d history %d", a.ImageTokens, a.Breakdown.History)
	}
	cat, err := LoadCatalog(strings.NewReader(`{"models":[{"name":"hi-res","match":["hires"],"wire":"anthropic","window":100000,"max_output":1000,"image_tokens":2500}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a = Assess(Inputs{Model: "hires-1", Messages: msgs, Catalog: cat})
	if a.ImageTokens != 2500 || a.Window != 100_000 || a.Wire != WireAnthropic {
		t.Fatalf("catalog entry not applied: %+v", a)
	}
}

// Base64 that is neither an image nor a PDF (an archive) is not
// discounted: there is no known per-payload ceiling for it.
func TestOtherBase64IsChargedOnItsBytes(t *testing.T) {
	m := raw(t, obj{"role": "user", "content": []any{obj{"type": "document", "source": obj{"type": "base64", "media_type": "application/zip", "data": strings.Repeat("UEsDBBQA", 2000)}}}})
	a := Assess(Inputs{Model: "claude-sonnet-4-6", Messages: []json.RawMessage{m}})
	if a.Images != 0 || a.Documents != 0 || a.Breakdown.History < 4000 {
		t.Fatalf("zip: images %d documents %d history %d", a.Images, a.Documents, a.Breakdown.History)
	}
}

func TestBadInputNeverPanicsNorUnderflows(t *testing.T) {
	msgs := []json.RawMessage{
		json.RawMessage(`not json at all {`),
		raw(t, obj{"role": "user", "content": []any{obj{"type": "hologram", "payload": obj{"x": 1}}}}), // unknown block type
		nil,
		json.RawMessage(`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":7}}]}`),
	}
	a := Assess(Inputs{Model: "claude-sonnet-4-6", Window: -5, Messages: msgs, ThinkingBudget: -1, OutputReserve: math.MaxInt,
		NextToolResultBytes: math.MaxInt, Tools: []json.RawMessage{json.RawMessage(`{broken`)}})
	if a.Window != 0 || a.Budget() != 0 || a.Remaining() != 0 || !a.ShouldCompact() {
		t.Fatalf("window %d budget %d remaining %d compact %v", a.Window, a.Budget(), a.Remaining(), a.ShouldCompact())
	}
	if a.Used() <= 0 || a.Reserves.Total() < 0 || a.Reserves.Output != maxTokens {
		t.Fatalf("used %d reserves %+v", a.Used(), a.Reserves)
	}
	want := []string{"window -5 is negative", "tool schema 0 is not JSON", "message 0 is not JSON", "thinking budget -1 is negative"}
	joined := strings.Join(a.Warnings, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings lack %q:\n%s", w, joined)
		}
	}
	// The unknown block is charged on its decoded text.
	c := tokens.Safe{}
	if got := estimateMessage(c, msgs[1], testCharges).tokens; got != textCount(t, c, msgs[1]) {
		t.Fatalf("unknown block charged %d", got)
	}
}

func TestFiftyMegabyteImage(t *testing.T) {
	size := 50 << 20
	if testing.Short() {
		size = 5 << 20 // the same path at a tenth of the size
	}
	var b bytes.Buffer
	b.WriteString(`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`)
	b.Write(bytes.Repeat([]byte("QUJD"), size/4))
	b.WriteString(`"}}]}`)
	a := Assess(Inputs{Model: "claude-sonnet-4-6", Messages: []json.RawMessage{b.Bytes()}})
	if a.Images != 1 || a.Breakdown.History > 1700 {
		t.Fatalf("images %d history %d", a.Images, a.Breakdown.History)
	}
}

func TestWindowDefaultsAndInputLimit(t *testing.T) {
	a := Assess(Inputs{Model: "gpt-5"})
	if a.Window != 400_000 || a.InputLimit != 272_000 || a.Counter != "o200k_base" {
		t.Fatalf("%+v", a)
	}
	// Output min(128K, defaultOutputCap) from the catalog; the input limit
	// binds: 272K − 5% of the 400K window.
	if got, want := a.Budget(), 272_000-20_000; got != want {
		t.Fatalf("budget %d, want %d", got, want)
	}
	u := Assess(Inputs{Model: "mystery"})
	if b, _ := json.Marshal(u); !bytes.Contains(b, []byte(`"wire":"unknown"`)) {
		t.Fatalf("unknown wire spelled %s", b)
	}
	if u.Window != DefaultWindow || u.Reserves.Output != DefaultMaxOutput || u.Counter != "safe" || u.Wire != WireUnknown {
		t.Fatalf("unknown model: %+v", u)
	}
	o := Assess(Inputs{Model: "mystery", Wire: WireOpenAI, OutputReserve: 100, ThinkingBudget: 50})
	if o.Reserves.Accounting != InsideOutput || o.Reserves.Output != 100 {
		t.Fatalf("wire override: %+v", o.Reserves)
	}
}

func TestAssessmentJSONCarriesTheDerivedFigures(t *testing.T) {
	a := Assess(Inputs{Model: "claude-sonnet-4-6", Window: 1000, Messages: []json.RawMessage{raw(t, obj{"role": "user", "content": "hi"})}})
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["used"] != float64(a.Used()) || m["budget"] != float64(a.Budget()) || m["should_compact"] != false ||
		m["reserves"].(map[string]any)["thinking_accounting"] != "inside_output" || m["wire"] != "anthropic" {
		t.Fatalf("%s", b)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func history(t testing.TB, n int, text string) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out[i] = raw(t, obj{"role": role, "content": fmt.Sprintf("%d %s", i, text)})
	}
	return out
}

// Appending one message to a long history costs about one message's
// counting work.
func TestSessionCountsOnlyTheAppendedMessage(t *testing.T) {
	cc := &countingCounter{Counter: tokens.Safe{}}
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6", Counter: cc})
	s.Update(func(in *Inputs) { in.System = strings.Repeat("be helpful. ", 500) })
	msgs := history(t, 1000, strings.Repeat("some words of history ", 10))
	first := s.Assess(msgs)
	before := cc.bytes.Load()
	next := raw(t, obj{"role": "user", "content": "one more"})
	msgs = append(msgs, next)
	second := s.Assess(msgs)
	if got, want := cc.bytes.Load()-before, int64(len("role"+"user"+"content"+"one more")); got != want {
		t.Fatalf("append counted %d bytes, want %d", got, want)
	}
	if second.Breakdown.History != first.Breakdown.History+textCount(t, tokens.Safe{}, next) {
		t.Fatal("history lane is not the sum")
	}
	// Same history again: nothing is counted.
	before = cc.bytes.Load()
	s.Assess(msgs)
	if cc.bytes.Load() != before {
		t.Fatal("unchanged history recounted")
	}
	// The same history re-serialized into new slices: recognised by
	// content, nothing counted, and not mistaken for a rewrite.
	copied := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		copied[i] = append(json.RawMessage(nil), m...)
	}
	third := s.Assess(copied)
	if cc.bytes.Load() != before || third.Compaction != nil || third.Breakdown != second.Breakdown {
		t.Fatalf("re-serialized history recounted or treated as a rewrite: %+v", third.Compaction)
	}
}

func TestObserveUsageAnchorsAndCalibrates(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6"})
	s.Update(func(in *Inputs) { in.Window = 200_000 })
	msgs := history(t, 6, "a message of history")
	a0 := s.Assess(msgs)
	est := a0.Breakdown.Total()

	// The provider billed half the estimate (Safe over-counts): the anchor
	// replaces the estimate, and the factor moves calibrationWeight of the
	// way down toward 0.5.
	if err := s.ObserveUsage(est/2, len(msgs)); err != nil {
		t.Fatal(err)
	}
	a1 := s.Assess(msgs)
	down := 1 + calibrationWeight*(float64(est/2)/float64(est)-1)
	if a1.Anchor == nil || a1.Used() != est/2 || !near(a1.Calibration, down) || !near(s.Calibration(), down) {
		t.Fatalf("anchored used %d (est %d), calibration %v (want %v), anchor %+v", a1.Used(), est, a1.Calibration, down, a1.Anchor)
	}
	// Messages added since are estimated on top of the anchor, scaled.
	more := append(msgs, raw(t, obj{"role": "user", "content": "new"}))
	a2 := s.Assess(more)
	rawAdded := estimateMessage(tokens.Safe{}, more[len(more)-1], testCharges).tokens + FramingTokensPerMessage
	if want := est/2 + scale(rawAdded, down); a2.Used() != want {
		t.Fatalf("used %d, want %d", a2.Used(), want)
	}
	if a2.Breakdown.History >= a0.Breakdown.History+10 {
		t.Fatalf("lanes not scaled down: %+v", a2.Breakdown)
	}

	// One under-estimated request (3x) raises the factor by a share of the
	// gap, not to 3 for good; reports that match the estimate pull it back
	// toward 1.
	if err := s.ObserveUsage(est*3, len(msgs)); err != nil {
		t.Fatal(err)
	}
	up := down + calibrationWeight*(3-down)
	if f := s.Calibration(); !near(f, up) || f <= 1 {
		t.Fatalf("calibration %v, want %v", f, up)
	}
	a3 := s.Assess(more)
	if a3.Calibration != s.Calibration() || a3.Breakdown.History <= a0.Breakdown.History {
		t.Fatalf("lanes not scaled up: %+v at %v", a3.Breakdown, a3.Calibration)
	}
	for range 20 {
		if err := s.ObserveUsage(est, len(msgs)); err != nil {
			t.Fatal(err)
		}
	}
	if f := s.Calibration(); f < 0.99 || f > 1.01 {
		t.Fatalf("calibration stuck at %v after 20 accurate reports", f)
	}
	// The factor stays within its bounds whatever is reported.
	for _, rep := range []int{0, est * 1000} {
		for range 50 {
			if err := s.ObserveUsage(rep, len(msgs)); err != nil {
				t.Fatal(err)
			}
		}
		if f := s.Calibration(); f < calibrationMin || f > calibrationMax {
			t.Fatalf("calibration %v out of bounds after reports of %d", f, rep)
		}
	}
	// Rewriting the anchored prefix drops the anchor.
	rewritten := append([]json.RawMessage{raw(t, obj{"role": "user", "content": "summary"})}, more[2:]...)
	if a := s.Assess(rewritten); a.Anchor != nil {
		t.Fatalf("stale anchor kept: %+v", a.Anchor)
	}
	for _, bad := range [][2]int{{-1, 0}, {10, 99}, {10, -1}} {
		if err := s.ObserveUsage(bad[0], bad[1]); !errors.Is(err, ErrUsage) {
			t.Errorf("ObserveUsage(%d, %d) = %v", bad[0], bad[1], err)
		}
	}
}

// A compaction that does not reduce the estimate is reported and latches
// ShouldCompact off until the history grows again.
func TestCompactionLoopGuard(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6"})
	s.Update(func(in *Inputs) {
		in.Window = 3_000
		in.OutputReserve = 100
	})
	msgs := history(t, 8, strings.Repeat("long history text ", 100))
	a := s.Assess(msgs)
	if !a.ShouldCompact() {
		t.Fatalf("want compaction advice: used %d budget %d", a.Used(), a.Budget())
	}
	// Growing the history (re-serialized into new slices) is no compaction.
	grownCopy := make([]json.RawMessage, 0, len(msgs)+1)
	for _, m := range msgs {
		grownCopy = append(grownCopy, append(json.RawMessage(nil), m...))
	}
	grownCopy = append(grownCopy, raw(t, obj{"role": "user", "content": "more"}))
	if g := s.Assess(grownCopy); g.Compaction != nil || !g.ShouldCompact() {
		t.Fatalf("append mistaken for compaction: %+v", g.Compaction)
	}
	a = s.Assess(msgs) // back to the advised history (a shrink: reported, reduced)
	if a.Compaction == nil || !a.Compaction.Reduced || !a.ShouldCompact() {
		t.Fatalf("shrink not reported as an effective compaction: %+v", a.Compaction)
	}
	// A "compaction" that produced a summary as big as what it replaced.
	huge := raw(t, obj{"role": "user", "content": strings.Repeat("a useless summary ", 10+a.Used()/3)})
	compacted := []json.RawMessage{huge, msgs[5], msgs[6], msgs[7]}
	b := s.Assess(compacted)
	if b.Compaction == nil || b.Compaction.Reduced || b.Compaction.Before != a.Used() {
		t.Fatalf("no-reduction not reported: %+v", b.Compaction)
	}
	if b.ShouldCompact() || !b.CompactionSuppressed {
		t.Fatal("advice not latched off")
	}
	// Same length again: still latched, and nothing new to report.
	if c := s.Assess(compacted); c.ShouldCompact() || c.Compaction != nil {
		t.Fatalf("latch released early: %+v", c)
	}
	// The history grows: advice resumes.
	grown := append(compacted, raw(t, obj{"role": "assistant", "content": "ok"}))
	if d := s.Assess(grown); !d.ShouldCompact() || d.CompactionSuppressed {
		t.Fatalf("advice not resumed: used %d budget %d", d.Used(), d.Budget())
	}
	// An effective compaction is reported as such and does not latch.
	small := []json.RawMessage{raw(t, obj{"role": "user", "content": "short summary"})}
	if e := s.Assess(small); e.Compaction == nil || !e.Compaction.Reduced || e.CompactionSuppressed {
		t.Fatalf("effective compaction: %+v", e.Compaction)
	}
}

func TestCatalog(t *testing.T) {
	cat := DefaultCatalog()
	for model, want := range map[string]string{
		"claude-sonnet-4-6":            "claude-sonnet-4-6",
		"anthropic/claude-sonnet-4-5":  "claude-sonnet-4",
		"claude-3-5-haiku-latest":      "claude-3-5",
		"claude-unknown-9":             "claude",
		"gpt-4o-mini":                  "gpt-4o-mini",
		"gpt-4o-2024-08-06":            "gpt-4o",
		"gpt-4-0613":                   "gpt-4",
		"GPT-4.1-nano":                 "gpt-4.1-nano",
		"gpt-4.1-2025-04-14":           "gpt-4.1",
		"o3-mini":                      "o-series",
		"google-gemini/gemini-2.5-pro": "gemini-2.5",
	} {
		m, ok := cat.lookup(model)
		if !ok || m.Name != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", model, m.Name, ok, want)
		}
	}
	if _, ok := cat.lookup("totally/unroutable-model"); ok {
		t.Error("unknown model found")
	}
	// lookup returns copies: mutating one does not change the catalog.
	m, _ := cat.lookup("gpt-4o")
	m.Match[0] = "zzz"
	if again, _ := cat.lookup("gpt-4o"); again.Match[0] != "gpt-4o" {
		t.Fatal("catalog mutated through Lookup")
	}
	// The embedded JSON round-trips through LoadCatalog.
	if c, err := LoadCatalog(bytes.NewReader(DefaultCatalogJSON())); err != nil || len(c.models) != len(cat.models) {
		t.Fatalf("reload: %v", err)
	}
	for _, bad := range []string{
		`{"models":[{"name":"x","match":["x"],"wire":"anthropic","window":0,"max_output":1}]}`,
		`{"models":[{"name":"x","match":["x"],"wire":"carrier-pigeon","window":10,"max_output":1}]}`,
		`{"models":[{"name":"x","match":[],"wire":"openai","window":10,"max_output":1}]}`,
		`{"models":[{"name":"x","match":["x"],"wire":"openai","window":10,"max_output":1,"tokenizer":"p50k"}]}`,
		`{"models":[{"name":"x","match":["x"],"wire":"openai","window":10,"max_output":1,"windwo":5}]}`,
		`[]`,
	} {
		if _, err := LoadCatalog(strings.NewReader(bad)); !errors.Is(err, ErrInvalidCatalog) {
			t.Errorf("LoadCatalog(%s) = %v", bad, err)
		}
	}
}

// FuzzEstimateMessage: any bytes as a message, never a panic, never a
// negative charge, and a charge never above the conservative bound of the
// bytes plus the images' flat charges.
func FuzzEstimateMessage(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}`))
	f.Add([]byte(`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}`))
	f.Add([]byte(`{"parts":[{"inline_data":{"mime_type":"image/png","data":"AAAA"}}]}`))
	f.Add([]byte(`{"content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}`))
	f.Add([]byte(`["data:image/gif;base64,R0lGOD", {"inlineData": {"mimeType": "image/x", "data": "q"}}]`))
	f.Add([]byte("\xff{not json"))
	long := strings.Repeat("QUJD", 1100)
	f.Add([]byte(`{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + long + `"}},{"type":"text","text":"` + long + `"}]}`))
	f.Add([]byte(`{"parts":[{"inline_data":{"mime_type":"image/png","data":"` + long + `"}}],"x":"\\\"` + long + `"}`))
	f.Add([]byte(`["data:image/png;base64,` + long + `", "data:image/png;base64,` + long + `"]`))
	// PDF documents in every shape, short and past the fast-path threshold.
	pdf := base64.StdEncoding.EncodeToString(buildPDF(3, 0))
	bigPDF := base64.StdEncoding.EncodeToString(buildPDF(2, 5000))
	for _, data := range []string{pdf, bigPDF, "%%%garbage", ""} {
		f.Add([]byte(`{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + data + `"}}]}`))
		f.Add([]byte(`{"parts":[{"inlineData":{"mimeType":"application/pdf","data":"` + data + `"}}]}`))
		f.Add([]byte(`{"content":[{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,` + data + `"}}]}`))
	}
	f.Add([]byte(`{"content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + bigPDF[:200] + `\/` + bigPDF[200:] + `"}}]}`))
	f.Add([]byte(`{"content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"/Type /Page base64"}}]}`))
	f.Add([]byte(`{"role":"user","content":"\u4f60\u597d \u003cb\u003e \ud83d\ude00 \ud800 \n\t\"","n":-1.5e+3,"ok":[true,false,null]}`))
	f.Add([]byte("{\"a\":\"\xff\xfe\"}"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		// The validating scan accepts exactly what encoding/json accepts,
		// and on a message the media rules leave alone it counts what the
		// decoding path counts.
		sc, ok := scanMessage(msg)
		if ok != json.Valid(msg) {
			t.Fatalf("scan valid %v, encoding/json %v", ok, json.Valid(msg))
		}
		if ok && !sc.media {
			c := tokens.Safe{}
			tree, treeOK := estimateTree(c, msg, testCharges, payloads{})
			if !treeOK || tree.tokens != sc.count(c) {
				t.Fatalf("scan counts %d, decoding path %+v", sc.count(c), tree)
			}
		}
		// The fast path for large payloads agrees with the full estimate.
		if fast, full := estimateMessage(tokens.Safe{}, msg, testCharges), estimateFull(tokens.Safe{}, msg, testCharges); fast != full {
			t.Fatalf("fast path %+v, full %+v", fast, full)
		}
		conservative, _ := tokens.ByName("conservative")
		for _, c := range []tokens.Counter{tokens.Safe{}, conservative} {
			got := estimateMessage(c, msg, testCharges)
			if got.tokens < 0 || got.images < 0 {
				t.Fatalf("negative estimate %+v", got)
			}
			// Every document is charged between one and maxPDFPages pages.
			if got.pages < got.documents || got.pages > got.documents*maxPDFPages {
				t.Fatalf("%d documents charged %d pages", got.documents, got.pages)
			}
			if got.images == 0 && got.tokens > c.Count(string(msg)) && !json.Valid(msg) {
				t.Fatalf("invalid message charged %d > %d", got.tokens, c.Count(string(msg)))
			}
		}
		a := Assess(Inputs{Model: "claude-sonnet-4-6", Window: 1000, Messages: []json.RawMessage{msg, msg, msg, msg}})
		if a.Used() < 0 || a.Remaining() < 0 || a.Remaining() > a.Budget() || a.Budget() > a.Window {
			t.Fatalf("inconsistent assessment %+v", a)
		}
	})
}

// A Session is safe for concurrent use (run under -race in CI).
func TestSessionConcurrentUse(t *testing.T) {
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6", ProjectID: "p"})
	msgs := history(t, 20, "concurrent")
	done := make(chan bool)
	for g := range 4 {
		go func() {
			for i := range 20 {
				a := s.Assess(msgs[:10+(g+i)%10])
				if a.Used() <= 0 {
					t.Error("empty assessment")
				}
				_ = s.ObserveUsage(a.Used(), 1)
				s.Update(func(in *Inputs) { in.System = fmt.Sprint("prompt ", i) })
				_ = s.HoldMemoryContribution(MemoryContribution{ProjectID: "p", Rendered: "m"})
			}
			done <- true
		}()
	}
	for range 4 {
		<-done
	}
}

// FuzzLoadCatalog: any bytes either fail with ErrInvalidCatalog or load a
// catalog whose every entry is usable.
func FuzzLoadCatalog(f *testing.F) {
	f.Add(DefaultCatalogJSON())
	f.Add([]byte(`{"models":[{"name":"x","match":["X "],"wire":"unknown","window":1,"max_output":0}]}`))
	f.Add([]byte(`{"models":[{"name":"x","match":["x"],"wire":"gemini","window":1e3,"max_output":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cat, err := LoadCatalog(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalidCatalog) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, m := range cat.models {
			if m.Window <= 0 || m.MaxOutput < 0 || len(m.Match) == 0 {
				t.Fatalf("invalid entry accepted: %+v", m)
			}
			got, ok := cat.lookup(m.Match[0])
			if !ok || got.Window <= 0 {
				t.Fatalf("entry %q not found by its own prefix", m.Name)
			}
			a := Assess(Inputs{Model: m.Match[0], Catalog: cat})
			if a.Budget() < 0 || a.Window != got.Window {
				t.Fatalf("assessment %+v", a)
			}
		}
	})
}

// TestSessionUpdateSwitchesModel: switching the model through Update
// recounts the cached message estimates with the new model's counter, and
// the session's own Messages are not taken from f.
func TestSessionUpdateSwitchesModel(t *testing.T) {
	msgs := []json.RawMessage{raw(t, obj{"role": "user", "content": strings.Repeat("The harbour town woke slowly that winter. ", 40)})}
	s := NewSession(&SessionOptions{Model: "gpt-4o"})
	before := s.Assess(msgs).Used()
	s.Update(func(in *Inputs) { in.Model = "claude-sonnet-4-6"; in.Messages = msgs })
	got := s.Assess(msgs).Used()
	want := NewSession(&SessionOptions{Model: "claude-sonnet-4-6"}).Assess(msgs).Used()
	if got != want || got == before {
		t.Errorf("after switching to claude used = %d, want %d (a fresh session), before %d", got, want, before)
	}
	if in := s.inputs(nil); in.Messages != nil || in.Model != "claude-sonnet-4-6" {
		t.Errorf("session inputs after Update: model %q, %d messages", in.Model, len(in.Messages))
	}
}
