package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/wire"
)

// childPIDs returns the pids of the host's stdio children.
func childPIDs(h *Host) []int {
	var out []int
	for _, e := range h.entries() {
		if s, ok := e.p.(*stdioProvider); ok {
			out = append(out, s.c.proc.Pid())
		}
	}
	return out
}

// closeAndCheck closes h and asserts no child process group survives.
func closeAndCheck(t *testing.T, h *Host) {
	t.Helper()
	pids := childPIDs(h)
	if err := h.Close(context.Background()); err != nil {
		t.Logf("close: %v", err)
	}
	for _, pid := range pids {
		deadline := time.Now().Add(3 * time.Second)
		for {
			err := syscall.Kill(-pid, 0)
			if errors.Is(err, syscall.ESRCH) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("process group %d still alive after Close (kill(0) = %v)", pid, err)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func bash(t *testing.T, h *Host, id, script string) {
	t.Helper()
	if err := h.AddStdio(id, "bash", []string{"-c", script}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestVersionRejectUnderDeadline(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	bash(t, h, "v2", `read h; printf '%s\n' '`+ackLine("contextgraph/2.0", false, "")+`'; sleep 30`)
	bash(t, h, "v1", `read h; printf '%s\n' '`+ackLine(wire.ProtocolVersion, false, "")+`'; read q; printf '%s\n' '{"type":"frames","result":{"frames":[],"truncated":false}}'; sleep 30`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := h.Connect(ctx, "v2")
	var vm *VersionMismatchError
	if !errors.As(err, &vm) {
		t.Fatalf("Connect v2 = %v, want VersionMismatchError", err)
	}
	if vm.ProviderVersion != "contextgraph/2.0" || !strings.Contains(err.Error(), "contextgraph/2.0") {
		t.Errorf("error does not name the version: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if _, err := h.Connect(ctx, "v1"); err != nil {
		t.Fatalf("counterpart rejected: %v", err)
	}
	fo := h.QueryAll(ctx, probe())
	if fo.Outcomes[0].Status != StatusVersionMismatch {
		t.Errorf("leg status = %v", fo.Outcomes[0].Status)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, &Options{HandshakeTimeout: 300 * time.Millisecond})
	bash(t, h, "mute", `sleep 30`)
	_, err := h.Connect(context.Background(), "mute")
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want timeout", err)
	}
}

// A leg whose handshake failed during a fan-out reports the time that
// handshake took, not zero.
func TestHandshakeTimeoutLegReportsItsTime(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, &Options{HandshakeTimeout: 300 * time.Millisecond})
	bash(t, h, "mute", `sleep 30`)
	fo := h.QueryAll(context.Background(), probe())
	if len(fo.Outcomes) != 1 {
		t.Fatalf("outcomes: %+v", fo.Outcomes)
	}
	if o := fo.Outcomes[0]; o.Status != StatusTimeout || o.Elapsed < 250*time.Millisecond || o.Elapsed > fo.Elapsed {
		t.Fatalf("status %v, elapsed %v (fan-out %v), want a timeout of about 300ms", o.Status, o.Elapsed, fo.Elapsed)
	}
}

func TestHandshakeRules(t *testing.T) {
	cases := map[string]struct {
		ack  *wire.HandshakeAck
		rule string
	}{
		"blank name": {&wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion, Provider: frame.ProviderInfo{Version: "1"}}, "H2"},
		"scope lie": {&wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion, Provider: frame.ProviderInfo{Name: "n", Version: "1",
			DataFlow: frame.DataFlow{EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}}}, "C5"},
		"bad custom scope": {&wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion, Provider: frame.ProviderInfo{Name: "n", Version: "1",
			DataFlow: frame.DataFlow{Egress: true, EgressScopes: []frame.EgressScope{"nonamespace"}}}}, "C5"},
		"compact without resolve": {&wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion, Provider: frame.ProviderInfo{Name: "n", Version: "1"},
			Capabilities: frame.Capabilities{Representations: []frame.Representation{frame.RepresentationCompact}}}, "resolve"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := New(testOpts(nil))
			defer h.Close(context.Background())
			h.AddInProcess("p", &fixedAck{c.ack})
			_, err := h.Connect(context.Background(), "p")
			if !errors.Is(err, errHandshake) || !strings.Contains(err.Error(), c.rule) {
				t.Fatalf("err = %v, want handshake rejection naming %s", err, c.rule)
			}
		})
	}
}

type fixedAck struct{ ack *wire.HandshakeAck }

func (f *fixedAck) Handshake(context.Context, string) (*wire.HandshakeAck, error) { return f.ack, nil }
func (f *fixedAck) Query(context.Context, *frame.Query) (*wire.Result, error) {
	return &wire.Result{}, nil
}
func (f *fixedAck) Verify(context.Context, []frame.ID) ([]wire.Verdict, error) { return nil, nil }

func TestBudgetDrop(t *testing.T) {
	h := New(testOpts(nil))
	defer h.Close(context.Background())
	h.AddInProcess("liar", &honest{frames: []frame.Frame{lying("big", 1200)}})
	h.AddInProcess("fine", &honest{frames: []frame.Frame{lying("ok", 200)}})
	fo := h.QueryAll(context.Background(), probe())
	liars := fo.budgetLiars()
	if len(liars) != 1 || liars[0].Provider != "liar" || liars[0].ClaimedTokens != 1200 || liars[0].Query.MaxTokens != 1000 {
		t.Fatalf("liars = %+v", liars)
	}
	if len(liars[0].Excluded) != 1 || liars[0].Excluded[0].Rule != "B2" {
		t.Errorf("liar's frames not reported: %+v", liars[0].Excluded)
	}
	for _, pf := range fo.Accepted() {
		if pf.Provider == "liar" {
			t.Errorf("liar frame accepted")
		}
	}
	// The counterpart frame declares 200 for content "c": B3 excludes it
	// (exclude-frames policy), but it is no budget liar.
	if o := fo.Outcomes[1]; o.Status != StatusFrames || len(o.Excluded) != 1 || o.Excluded[0].Rule != "B3" {
		t.Errorf("counterpart outcome = %+v", o)
	}
	h2 := New(testOpts(nil))
	defer h2.Close(context.Background())
	h2.AddInProcess("fine", &honest{frames: []frame.Frame{mkFrame("ok", strings.Repeat("x", 800), 0.5)}})
	fo = h2.QueryAll(context.Background(), probe())
	if len(fo.budgetLiars()) != 0 || len(fo.Accepted()) != 1 {
		t.Errorf("honest 200-token frame: %+v", fo.Outcomes)
	}
}

func TestFrameFlood(t *testing.T) {
	var many, two []frame.Frame
	for i := range 12 {
		many = append(many, mkFrame("f"+string(rune('a'+i)), "abcd", 0.5))
	}
	two = many[:2]
	h := New(testOpts(nil))
	defer h.Close(context.Background())
	h.AddInProcess("flood", &honest{frames: many})
	h.AddInProcess("two", &honest{frames: two})
	q := probe()
	q.MaxFrames = 3
	fo := h.QueryAll(context.Background(), q)
	if fl := fo.frameFloods(); len(fl) != 1 || fl[0].Provider != "flood" || fl[0].ReturnedFrames != 12 {
		t.Fatalf("floods = %+v", fl)
	}
	if n := len(fo.Accepted()); n != 2 {
		t.Errorf("accepted %d, want 2 (the counterpart's)", n)
	}
}

func TestBudgetedSplitAndAudit(t *testing.T) {
	h := New(testOpts(nil))
	defer h.Close(context.Background())
	seen := make(chan frame.Query, 3)
	for _, id := range []string{"a", "b", "c"} {
		h.AddInProcess(id, &honest{seen: seen, kinds: []frame.Kind{frame.KindDoc}})
	}
	h.AddInProcess("symbols-only", &honest{seen: seen, kinds: []frame.Kind{frame.KindSymbol}})
	q := probe()
	q.Kinds = []frame.Kind{frame.KindDoc}
	fo := h.QueryAllBudgeted(context.Background(), q, 1000)
	close(seen)
	var shares []uint32
	for _, o := range fo.Outcomes[:3] {
		shares = append(shares, o.Share)
		chrome := FrameChrome(o.Provider)
		if o.Query.MaxTokens+o.Query.MaxFrames*chrome != o.Share || o.Query.MaxFrames == 0 {
			t.Errorf("%s: max_tokens %d + %d frames × chrome %d != share %d", o.Provider, o.Query.MaxTokens, o.Query.MaxFrames, chrome, o.Share)
		}
	}
	if len(fo.Outcomes) != 4 || shares[0] != 334 || shares[1] != 333 || shares[2] != 333 {
		t.Fatalf("shares = %v (outcomes %d)", shares, len(fo.Outcomes))
	}
	// The provider serving none of the asked kinds is in the report, not queried.
	if o := fo.Outcomes[3]; o.Status != StatusKindsNotServed || o.Share != 0 ||
		!strings.Contains(o.Error(), "[doc]") || !strings.Contains(o.Error(), "[symbol]") {
		t.Errorf("symbols-only leg = %v %q", o.Status, o.Error())
	}
	if len(fo.Failures()) != 0 {
		t.Errorf("a skipped leg counts as a failure: %v", fo.Failures())
	}
	n := 0
	for q := range seen {
		n++
		if q.MaxTokens >= 333 {
			t.Errorf("a provider was asked for max_tokens %d, its whole share: no fence reserved", q.MaxTokens)
		}
	}
	if n != 3 {
		t.Errorf("%d providers queried, want the 3 that serve doc", n)
	}
}

func TestKindAndValidityPolicy(t *testing.T) {
	sym := mkFrame("sym", "abcd", 0.5)
	sym.Kind = frame.KindSymbol
	badScore := mkFrame("score", "abcd", 1.5)
	noCite := mkFrame("nocite", "abcd", 0.5)
	noCite.CitationLabel = "  "
	good := mkFrame("good", "abcd", 0.5)
	frames := []frame.Frame{sym, badScore, noCite, good}
	q := probe()
	q.Kinds = []frame.Kind{frame.KindDoc}

	h := New(testOpts(nil))
	defer h.Close(context.Background())
	h.AddInProcess("p", &honest{frames: frames, kinds: []frame.Kind{frame.KindDoc}})
	fo := h.QueryAll(context.Background(), q)
	o := fo.Outcomes[0]
	if o.Status != StatusFrames || len(o.Frames) != 1 || o.Frames[0].ID != "good" {
		t.Fatalf("exclude-frames: %+v", o)
	}
	rules := map[string]string{}
	for _, e := range o.Excluded {
		rules[e.Frame.Frame] = string(e.Rule)
	}
	if rules["sym"] != "Q1" || rules["score"] != "F1" || rules["nocite"] != "F3" {
		t.Errorf("excluded rules = %v", rules)
	}

	h2 := New(testOpts(&Options{Policy: DropLeg}))
	defer h2.Close(context.Background())
	h2.AddInProcess("p", &honest{frames: frames, kinds: []frame.Kind{frame.KindDoc}})
	fo = h2.QueryAll(context.Background(), q)
	if o := fo.Outcomes[0]; o.Status != StatusKindViolation || len(o.Frames) != 0 || len(o.Excluded) != 3 {
		t.Fatalf("drop-leg: %+v", o)
	}
	h3 := New(testOpts(&Options{Policy: DropLeg}))
	defer h3.Close(context.Background())
	h3.AddInProcess("p", &honest{frames: []frame.Frame{badScore, good}})
	if o := h3.QueryAll(context.Background(), probe()).Outcomes[0]; o.Status != StatusInvalidFrames {
		t.Fatalf("drop-leg invalid: %+v", o)
	}
}

func TestConsentGate(t *testing.T) {
	noLeak(t)
	rec := filepath.Join(t.TempDir(), "received")
	h := newTestHost(t, nil)
	addFake(t, h, "egress", "record", "CTXKIT_RECORD="+rec, `CTXKIT_FLOW={"reads":true,"writes":false,"egress":true}`)
	q := probe()
	q.Goal = "secret-goal-bytes"
	fo := h.QueryAll(context.Background(), q)
	if o := fo.Outcomes[0]; o.Status != StatusConsentRequired || !errors.Is(o.Err, ErrConsentRequired) {
		t.Fatalf("outcome = %+v", o)
	}
	_, err := h.QueryProvider(context.Background(), "egress", q)
	var ce *ConsentError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "ctxkit consent grant egress") {
		t.Fatalf("direct query err = %v", err)
	}
	got, _ := os.ReadFile(rec)
	if strings.Contains(string(got), "secret-goal") || strings.Contains(string(got), `"query"`) {
		t.Fatalf("provider received query bytes: %q", got)
	}
	if !strings.Contains(string(got), `"handshake"`) {
		t.Fatalf("recorder saw nothing at all (bad fixture): %q", got)
	}
	// Counterpart: after a consent record the provider is queried.
	if err := h.Consent().Record(consent.Record{ProviderID: "egress", GrantedScope: "egress"}); err != nil {
		t.Fatal(err)
	}
	fo = h.QueryAll(context.Background(), q)
	if o := fo.Outcomes[0]; o.Status != StatusFrames || len(o.Frames) != 1 {
		t.Fatalf("after consent: %+v", o)
	}
	got, _ = os.ReadFile(rec)
	if !strings.Contains(string(got), "secret-goal") {
		t.Errorf("after consent the provider did not receive the query")
	}
}

func TestScopeReceipt(t *testing.T) {
	h := New(testOpts(nil))
	defer h.Close(context.Background())
	seen := make(chan frame.Query, 1)
	flow := frame.DataFlow{Egress: true, EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly, frame.ScopeThirdPartyModel}}
	h.AddInProcess("llm", &honest{flow: flow, seen: seen, frames: []frame.Frame{mkFrame("f", "abcd", 0.5)}})
	// A legacy record does not satisfy a scope gate.
	h.Consent().Record(consent.Record{ProviderID: "llm", GrantedScope: "all"})
	fo := h.QueryAll(context.Background(), probe())
	o := fo.Outcomes[0]
	if o.Status != StatusScopeReceiptRequired || len(o.Missing) != 1 || o.Missing[0] != frame.ScopeThirdPartyModel {
		t.Fatalf("outcome = %+v", o)
	}
	if _, err := h.QueryProvider(context.Background(), "llm", probe()); err == nil || !strings.Contains(err.Error(), "third-party-model") {
		t.Fatalf("direct err = %v", err)
	}
	select {
	case <-seen:
		t.Fatal("provider was queried without a receipt")
	default:
	}
	err := h.Consent().Grant(consent.Receipt{ProviderID: "llm", Scope: frame.ScopeThirdPartyModel, ProviderName: "honest", ProviderVersion: "1.0.0",
		Grantor: consent.Grantor{Kind: "human", ID: "ada"}})
	if err != nil {
		t.Fatal(err)
	}
	fo = h.QueryAll(context.Background(), probe())
	if o := fo.Outcomes[0]; o.Status != StatusFrames || len(o.Frames) != 1 {
		t.Fatalf("after receipt: %+v", o)
	}
}

func TestCrashIsolation(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	h.AddInProcess("healthy", &honest{frames: []frame.Frame{mkFrame("h", "abcd", 0.5)}})
	addFake(t, h, "crasher", "crash")
	bash(t, h, "bashcrash", `read h; printf '%s\n' '`+ackLine(wire.ProtocolVersion, false, "")+`'; exit 0`)
	start := time.Now()
	fo := h.QueryAll(context.Background(), probe())
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("fan-out took %v", d)
	}
	if fo.Outcomes[0].Status != StatusFrames || len(fo.Outcomes[0].Frames) != 1 {
		t.Errorf("healthy leg = %+v", fo.Outcomes[0])
	}
	for _, o := range fo.Outcomes[1:] {
		if o.Status != StatusCrashed || !errors.Is(o.Err, ErrProviderCrashed) {
			t.Errorf("crasher leg = %v %v", o.Status, o.Err)
		}
	}
	if len(fo.Failures()) != 2 {
		t.Errorf("failures = %d", len(fo.Failures()))
	}
	// Counterpart: healthy in-process + healthy stdio both contribute.
	h2 := newTestHost(t, nil)
	h2.AddInProcess("healthy", &honest{frames: []frame.Frame{mkFrame("h", "abcd", 0.5)}})
	addFake(t, h2, "child", "healthy")
	fo = h2.QueryAll(context.Background(), probe())
	if len(fo.Accepted()) != 2 || len(fo.Failures()) != 0 {
		t.Errorf("counterpart: %+v", fo.Outcomes)
	}
}

func TestHangingProviderTimesOut(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, &Options{QueryTimeout: 300 * time.Millisecond})
	addFake(t, h, "hang", "hang")
	h.AddInProcess("slow-inproc", &honest{delay: time.Hour})
	h.AddInProcess("ok", &honest{frames: []frame.Frame{mkFrame("h", "abcd", 0.5)}})
	start := time.Now()
	fo := h.QueryAll(context.Background(), probe())
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("fan-out took %v", d)
	}
	for _, o := range fo.Outcomes[:2] {
		if o.Status != StatusTimeout || !errors.Is(o.Err, ErrTimeout) {
			t.Errorf("%s: %v %v", o.Provider, o.Status, o.Err)
		}
	}
	if fo.Outcomes[2].Status != StatusFrames {
		t.Errorf("healthy leg: %+v", fo.Outcomes[2])
	}
}

func TestHugeLineIsBounded(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	addFake(t, h, "big", "bigline")
	fo := h.QueryAll(context.Background(), probe())
	o := fo.Outcomes[0]
	if o.Status != StatusFailed || !errors.Is(o.Err, errMalformed) || !strings.Contains(o.Err.Error(), "limit") {
		t.Fatalf("outcome = %v %v", o.Status, o.Err)
	}
}

func TestGarbageAndWrongID(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	addFake(t, h, "garbage", "garbage")
	addFake(t, h, "wrongid", "wrongid", "CTXKIT_CORR=1")
	addFake(t, h, "noid", "noid", "CTXKIT_CORR=1")
	addFake(t, h, "coded", "error")
	fo := h.QueryAll(context.Background(), probe())
	if o := fo.Outcomes[0]; !errors.Is(o.Err, errMalformed) || o.Status != StatusFailed {
		t.Errorf("garbage: %v %v", o.Status, o.Err)
	}
	for _, o := range fo.Outcomes[1:3] {
		var ce *correlationError
		if !errors.As(o.Err, &ce) || ce.Expected == "" || o.Status != StatusFailed {
			t.Errorf("%s: %v %v", o.Provider, o.Status, o.Err)
		}
	}
	if !strings.Contains(fo.Outcomes[2].Err.Error(), "<absent>") {
		t.Errorf("noid error does not say the id was absent: %v", fo.Outcomes[2].Err)
	}
	var we *wire.Error
	if o := fo.Outcomes[3]; !errors.As(o.Err, &we) || we.Code != wire.CodeBudgetUnsatisfiable {
		t.Errorf("coded error lost its code: %v", o.Err)
	}
}

func TestConcurrentCorrelatedQueries(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	addFake(t, h, "child", "healthy", "CTXKIT_CORR=1")
	queryConcurrently(t, h, "child", 20, nil)
}

func TestStderrCapturedBounded(t *testing.T) {
	h := newTestHost(t, nil)
	addFake(t, h, "noisy", "stderr")
	fo := h.QueryAll(context.Background(), probe())
	if fo.Outcomes[0].Status != StatusCrashed {
		t.Fatalf("outcome %v", fo.Outcomes[0].Status)
	}
	e, _ := h.lookup("noisy")
	tail := stderrOf(e.p)
	if len(tail) > 64<<10+100 || !strings.Contains(tail, "earlier bytes dropped") || !strings.Contains(tail, "noise") {
		t.Errorf("stderr tail: %d bytes, %q…", len(tail), tail[:min(80, len(tail))])
	}
}

func TestCloseKillsGrandchildren(t *testing.T) {
	noLeak(t)
	h := New(testOpts(nil))
	bash(t, h, "spawner", `sleep 300 & read h; printf '%s\n' '`+ackLine(wire.ProtocolVersion, false, "")+`'; read q; sleep 300`)
	if _, err := h.Connect(context.Background(), "spawner"); err != nil {
		t.Fatal(err)
	}
	closeAndCheck(t, h)
	if _, err := h.QueryProvider(context.Background(), "spawner", probe()); !errors.Is(err, ErrClosed) {
		t.Errorf("query after close: %v", err)
	}
}

func TestChildEnvironmentIsCleared(t *testing.T) {
	t.Setenv("CTXKIT_SECRET_FOR_TEST", "leaked")
	out := filepath.Join(t.TempDir(), "env")
	h := newTestHost(t, nil)
	if err := h.AddStdio("env", "bash", []string{"-c", `env > "$OUT"; read h; printf '%s\n' '` + ackLine(wire.ProtocolVersion, false, "") + `'; sleep 30`},
		&StdioOptions{Env: []string{"OUT=" + out}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Connect(context.Background(), "env"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	env := string(b)
	if strings.Contains(env, "CTXKIT_SECRET_FOR_TEST") || !strings.Contains(env, "PATH=") || !strings.Contains(env, "OUT=") {
		t.Errorf("child env:\n%s", env)
	}
}

func TestInProcessPanicIsolated(t *testing.T) {
	h := New(testOpts(nil))
	defer h.Close(context.Background())
	h.AddInProcess("panics", &panicky{})
	h.AddInProcess("ok", &honest{frames: []frame.Frame{mkFrame("h", "abcd", 0.5)}})
	fo := h.QueryAll(context.Background(), probe())
	if fo.Outcomes[0].Status != StatusCrashed || fo.Outcomes[1].Status != StatusFrames {
		t.Fatalf("%+v", fo.Outcomes)
	}
}

type panicky struct{ honest }

func (p *panicky) Query(context.Context, *frame.Query) (*wire.Result, error) { panic("boom") }

// testOpts shortens the shutdown grace so tests with children that ignore
// shutdown stay fast.
// newTestHost is a host with testOpts(o) that closeAndCheck closes when
// the test ends.
func newTestHost(t *testing.T, o *Options) *Host {
	t.Helper()
	h := New(testOpts(o))
	t.Cleanup(func() { closeAndCheck(t, h) })
	return h
}

func testOpts(o *Options) *Options {
	if o == nil {
		o = &Options{}
	}
	o.ShutdownGrace = 200 * time.Millisecond
	return o
}

func TestCorrelationIDsOnlyWhenDeclared(t *testing.T) {
	dir := t.TempDir()
	h := newTestHost(t, nil)
	addFake(t, h, "plain", "record", "CTXKIT_RECORD="+filepath.Join(dir, "plain"))
	addFake(t, h, "corr", "record", "CTXKIT_RECORD="+filepath.Join(dir, "corr"), "CTXKIT_CORR=1")
	fo := h.QueryAll(context.Background(), probe())
	if len(fo.Accepted()) != 2 {
		t.Fatalf("%+v", fo.Outcomes)
	}
	plain, _ := os.ReadFile(filepath.Join(dir, "plain"))
	corr, _ := os.ReadFile(filepath.Join(dir, "corr"))
	if strings.Contains(string(plain), `"id"`) || !strings.Contains(string(corr), `{"type":"query","id":"q`) {
		t.Errorf("plain saw %q\ncorr saw %q", plain, corr)
	}
}

func TestEmbeddingAndRepresentationTailoring(t *testing.T) {
	seen := make(chan frame.Query, 2)
	h := New(&Options{EmbeddingsFingerprint: "m/2"})
	defer h.Close(context.Background())
	h.AddInProcess("match", &fpProvider{honest{seen: seen}, "m/2"})
	h.AddInProcess("other", &fpProvider{honest{seen: seen}, "m/3"})
	q := probe()
	q.Embedding = []float32{0.5, 0.5}
	q.RepresentationPreferences = []frame.Representation{frame.RepresentationCompact, frame.RepresentationFull}
	h.QueryAll(context.Background(), q)
	close(seen)
	got := map[int]int{}
	for sq := range seen {
		got[len(sq.Embedding)]++
		if len(sq.RepresentationPreferences) != 1 || sq.RepresentationPreferences[0] != frame.RepresentationFull {
			t.Errorf("representation preferences sent: %v", sq.RepresentationPreferences)
		}
	}
	if got[2] != 1 || got[0] != 1 {
		t.Errorf("embeddings sent: %v", got)
	}
}

type fpProvider struct {
	honest
	fp string
}

func (f *fpProvider) Handshake(ctx context.Context, v string) (*wire.HandshakeAck, error) {
	a, _ := f.honest.Handshake(ctx, v)
	a.Capabilities.EmbeddingsFingerprint = f.fp
	return a, nil
}

func TestCrashFailsEveryWaiter(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	// The child reads the first query and dies; the others are in flight.
	addFake(t, h, "c", "crash", "CTXKIT_CORR=1")
	if d := queryConcurrently(t, h, "c", 10, ErrProviderCrashed); d > 3*time.Second {
		t.Errorf("waiters failed after %v", d)
	}
}

// helperFrameJSON is the host-conformance helper frame: content "c", score
// 0.5, the given declared cost.
func helperFrameJSON(id string, cost int) string {
	return fmt.Sprintf(`{"id":%q,"kind":"doc","title":%q,"content":"c","score":0.5,"token_cost":%d,"citation_label":%q}`, id, id, cost, id)
}

func TestBudgetLieAndFloodOverStdio(t *testing.T) {
	noLeak(t)
	h := newTestHost(t, nil)
	ack := ackLine(wire.ProtocolVersion, false, "")
	reply := func(frames ...string) string {
		return `{"type":"frames","result":{"frames":[` + strings.Join(frames, ",") + `],"truncated":false}}`
	}
	var flood []string
	for i := range 12 {
		flood = append(flood, helperFrameJSON(fmt.Sprintf("f%d", i), 1))
	}
	for id, r := range map[string]string{
		"liar":   reply(helperFrameJSON("big", 1200)),
		"flood":  reply(flood...),
		"honest": reply(helperFrameJSON("ok", 1)),
	} {
		bash(t, h, id, `read h; printf '%s\n' '`+ack+`'; read q; printf '%s\n' '`+r+`'; read s`)
	}
	q := probe()
	q.MaxFrames = 3
	fo := h.QueryAll(context.Background(), q)
	byID := map[string]Outcome{}
	for _, o := range fo.Outcomes {
		byID[o.Provider] = o
	}
	if o := byID["liar"]; o.Status != StatusBudgetLie || o.ClaimedTokens != 1200 {
		t.Errorf("liar: %v claimed %d", o.Status, o.ClaimedTokens)
	}
	if o := byID["flood"]; o.Status != StatusFrameFlood || o.ReturnedFrames != 12 || len(o.Excluded) != 12 {
		t.Errorf("flood: %v returned %d", o.Status, o.ReturnedFrames)
	}
	if o := byID["honest"]; o.Status != StatusFrames || len(o.Frames) != 1 {
		t.Errorf("honest: %+v", o)
	}
	if n := len(fo.Accepted()); n != 1 {
		t.Errorf("accepted %d", n)
	}
}

// queryConcurrently handshakes with provider id, then sends it n probe
// queries at once, fails t unless every one ends in want (nil: succeeds),
// and returns how long the queries took.
func queryConcurrently(t *testing.T, h *Host, id string, n int, want error) time.Duration {
	t.Helper()
	if _, err := h.Connect(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := h.QueryProvider(context.Background(), id, probe())
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; !errors.Is(err, want) {
			t.Errorf("query %q: got %v, want %v", id, err, want)
		}
	}
	return time.Since(start)
}

// The audit policy and the leg status read back every spelling they write,
// and refuse others by name, leaving the value as it was.
func TestEnumSpellingsRoundTrip(t *testing.T) {
	for _, p := range []AuditPolicy{ExcludeFrames, DropLeg} {
		b, _ := p.MarshalText()
		var q AuditPolicy
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Errorf("policy %s read back as %v, %v", b, q, err)
		}
	}
	for i := range statusNames {
		b, _ := Status(i).MarshalText()
		var s Status
		if err := s.UnmarshalText(b); err != nil || s != Status(i) {
			t.Errorf("status %s read back as %v, %v", b, s, err)
		}
	}
	p := DropLeg
	if err := p.UnmarshalText([]byte("drop")); err == nil || !strings.Contains(err.Error(), `audit policy "drop"`) || p != DropLeg {
		t.Errorf("unknown policy: %v, value %v", err, p)
	}
	s := StatusTimeout
	if err := s.UnmarshalText([]byte("late")); err == nil || !strings.Contains(err.Error(), `leg status "late"`) || s != StatusTimeout {
		t.Errorf("unknown status: %v, value %v", err, s)
	}
}
