package files_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/host/serve"
	"github.com/ctxkit/ctxkit/wire"
)

// tree writes a small repository to a temp dir.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w := func(rel, content string) { files.WriteFile(t, dir, rel, content) }
	w("docs/retry.md", "# Retry policy\n\nThe client retries a failed request three times with exponential backoff.\nJitter spreads the retries.\n\n# Timeouts\n\nEach request has a deadline of thirty seconds.\n")
	w("docs/budget.md", "# Budget\n\nThe budget is split equally between providers; the remainder goes to the first ones.\n")
	w("src/retry.go", "package retry\n\n// Backoff returns the delay before attempt n.\nfunc Backoff(n int) int { return 1 << n }\n")
	w("src/other.go", "package other\n\nfunc Unrelated() {}\n")
	w("bin/blob.bin", "\x00\x01\x02binary")
	w(".git/config", "[core]\nretry = true\n")
	w("big.txt", strings.Repeat("retry ", 300000))
	os.Symlink("/etc/passwd", filepath.Join(dir, "docs", "link.md"))
	return dir
}

func build(t *testing.T, dir string) *files.Provider {
	t.Helper()
	ix, err := files.Build(context.Background(), dir, &files.IndexOptions{MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return files.New(ix)
}

func sample() *frame.Query {
	return &frame.Query{Goal: "conformance probe: return your most relevant frames", QueryText: "conformance probe retry backoff", MaxFrames: 8, MaxTokens: 4096}
}

func TestIndexSkipsAndCounts(t *testing.T) {
	dir := tree(t)
	p := build(t, dir)
	ix := p.Indexes()[0]
	sk := ix.Stats().Skipped
	if ix.Files() != 4 || sk.Binary != 1 || sk.TooLarge != 1 || sk.Symlinks != 1 {
		t.Errorf("files=%d skipped=%+v", ix.Files(), sk)
	}
	var buf bytes.Buffer
	if _, err := files.Build(context.Background(), dir, &files.IndexOptions{Progress: &buf}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "1 binary") {
		t.Errorf("progress: %q", buf.String())
	}
	if _, err := files.Build(context.Background(), filepath.Join(dir, "docs", "retry.md"), nil); err == nil {
		t.Errorf("a file root was accepted")
	}
}

// TestProviderRules checks the provider-side rules of the conformance
// suite (docs/protocol.md §5.1) directly.
func TestProviderRules(t *testing.T) {
	dir := tree(t)
	p := build(t, dir)
	ctx := context.Background()
	ack, err := p.Handshake(ctx, wire.ProtocolVersion)
	if err != nil || strings.TrimSpace(ack.Provider.Name) == "" || strings.TrimSpace(ack.Provider.Version) == "" || !wire.Compatible(ack.ProtocolVersion, wire.ProtocolVersion) {
		t.Fatalf("handshake: %+v %v", ack, err)
	}
	if !ack.Provider.DataFlow.ScopesConsistent() || ack.Provider.DataFlow.Egress {
		t.Errorf("consent-scope: %+v", ack.Provider.DataFlow)
	}
	res, err := p.Query(ctx, sample())
	if err != nil || len(res.Frames) == 0 {
		t.Fatalf("query: %v %v", res, err)
	}
	// frame-validity + budget-honesty (B1, B3, B4)
	var sum uint64
	for i := range res.Frames {
		f := &res.Frames[i]
		if v := f.Validate(); len(v) > 0 {
			t.Errorf("frame %s: %v", f.ID, v)
		}
		sum += uint64(f.TokenCost)
		// provenance-fixture-consistency: re-read the bytes
		for _, pv := range f.Provenance {
			if c := host.VerifyFileProvenance(pv, []string{dir}); c.Status != host.ProvenanceVerified {
				t.Errorf("provenance of %s: %+v", f.ID, c)
			}
		}
	}
	if sum > 4096 || len(res.Frames) > 8 {
		t.Errorf("B1/B4: %d tokens, %d frames", sum, len(res.Frames))
	}
	if !strings.HasPrefix(res.Frames[0].ID, "docs/retry.md") && !strings.HasPrefix(res.Frames[0].ID, "src/retry.go") {
		t.Errorf("ranking: first frame %s", res.Frames[0].ID)
	}
	// Tight budgets: B1 holds and nothing is cut short silently.
	q := sample()
	q.MaxTokens = 30
	q.MaxFrames = 1
	small, _ := p.Query(ctx, q)
	var s2 uint64
	for _, f := range small.Frames {
		s2 += uint64(f.TokenCost)
	}
	if s2 > 30 || len(small.Frames) > 1 || !small.Truncated || small.DroppedEstimate == nil || *small.DroppedEstimate == 0 {
		t.Errorf("tight budget: %d tokens, %d frames, truncated=%v", s2, len(small.Frames), small.Truncated)
	}
	checkVerifyHonesty(t, p, res)
	// kinds-filter
	q = sample()
	q.Kinds = []frame.Kind{frame.KindSnippet}
	sn, _ := p.Query(ctx, q)
	if len(sn.Frames) == 0 {
		t.Errorf("no snippet frames")
	}
	for _, f := range sn.Frames {
		if f.Kind != frame.KindSnippet {
			t.Errorf("kinds-filter: %s is %s", f.ID, f.Kind)
		}
	}
	q.Kinds = []frame.Kind{frame.KindSymbol}
	if sy, _ := p.Query(ctx, q); len(sy.Frames) != 0 {
		t.Errorf("symbol query answered with %d frames", len(sy.Frames))
	}
	// as-of-temporal: a pin before every file's mtime returns nothing.
	q = sample()
	q.AsOf = "2001-01-01T00:00:00Z"
	if old, _ := p.Query(ctx, q); len(old.Frames) != 0 {
		t.Errorf("as_of ignored: %d frames", len(old.Frames))
	}
	q.AsOf = time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05Z")
	if later, _ := p.Query(ctx, q); len(later.Frames) == 0 {
		t.Errorf("as_of in the future hid frames")
	}
	for _, f := range res.Frames {
		if f.ValidFrom == "" || f.ValidFrom > q.AsOf {
			t.Errorf("valid_from %q", f.ValidFrom)
		}
	}
	// anchors: a chunk of the anchored file ranks first even if unrelated.
	q = sample()
	q.Anchors = []string{files.FileURI(filepath.Join(p.Indexes()[0].Root(), "src", "other.go"))}
	an, _ := p.Query(ctx, q)
	if len(an.Frames) == 0 || !strings.HasPrefix(an.Frames[0].ID, "src/other.go") {
		t.Errorf("anchor not first: %v", an.Frames)
	}
	q.Anchors = []string{"docs/budget.md"}
	if an, _ = p.Query(ctx, q); !strings.HasPrefix(an.Frames[0].ID, "docs/budget.md") {
		t.Errorf("relative anchor not first")
	}
	// bad requests
	for _, bad := range []frame.Query{{Goal: "", MaxFrames: 1, MaxTokens: 1}, {Goal: "g", MaxFrames: 0, MaxTokens: 1}, {Goal: "g", MaxFrames: 1, MaxTokens: 1, AsOf: "yesterday"},
		{Goal: "g", MaxFrames: 1, MaxTokens: 1, RepresentationPreferences: []frame.Representation{frame.RepresentationCompact}}} {
		if _, err := p.Query(ctx, &bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

func TestVerifySeesChanges(t *testing.T) {
	dir := tree(t)
	p := build(t, dir)
	ctx := context.Background()
	res, _ := p.Query(ctx, &frame.Query{Goal: "budget split providers", MaxFrames: 1, MaxTokens: 1000})
	if len(res.Frames) != 1 || !strings.HasPrefix(res.Frames[0].ID, "docs/budget.md") {
		t.Fatalf("frames: %+v", res.Frames)
	}
	id := res.Frames[0].Identity("files")
	os.WriteFile(filepath.Join(dir, "docs/budget.md"), []byte("# Budget\n\nchanged\n"), 0o644)
	vs, _ := p.Verify(ctx, []frame.ID{id})
	if vs[0].Status != wire.StatusStale {
		t.Errorf("after edit: %+v", vs[0])
	}
	os.Remove(filepath.Join(dir, "docs/budget.md"))
	vs, _ = p.Verify(ctx, []frame.ID{id})
	if vs[0].Status != wire.StatusGone {
		t.Errorf("after delete: %+v", vs[0])
	}
}

// TestServedOverStdio runs the provider behind host.ServeStdio on pipes and
// drives it with a Host through the stdio wire probes: malformed input
// tolerance, correlation echo and clean shutdown.
func TestServedOverStdioWire(t *testing.T) {
	p := build(t, tree(t))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve.Stdio(context.Background(), p, inR, outW); outW.Close() }()
	dec := wire.NewDecoder(outR, nil)
	send := func(s string) { io.WriteString(inW, s+"\n") }
	send(`{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}`)
	if e, err := dec.Decode(); err != nil || e.Type() != "handshake_ack" {
		t.Fatalf("ack: %v %v", e, err)
	}
	send(`this is not valid json {{{`)
	e, err := dec.Decode()
	if we, ok := e.(*wire.Error); err != nil || !ok || we.Code != wire.CodeBadRequest {
		t.Fatalf("malformed: %v %v", e, err)
	}
	send(`{"type":"query","id":"cgp-conformance-h4-7f3a","query":{"goal":"retry","max_frames":2,"max_tokens":500}}`)
	e, err = dec.Decode()
	f, ok := e.(*wire.Frames)
	if err != nil || !ok || f.ID != "cgp-conformance-h4-7f3a" || len(f.Result.Frames) == 0 {
		t.Fatalf("correlated query: %v %v", e, err)
	}
	checkWireDiagnostics(t, f.Result)
	send(`{"type":"query","id":"x","query":{"goal":"retry","max_frames":2,"max_tokens":500,"embedding":[0.5]}}`)
	if e, _ = dec.Decode(); e.Type() != "error" {
		t.Errorf("embedding without fingerprint answered %v", e.Type())
	}
	send(`{"type":"shutdown"}`)
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

// checkVerifyHonesty verifies the frames of res as served, with mutated
// digests, and for ids the provider never served.
func checkVerifyHonesty(t *testing.T, p *files.Provider, res *wire.Result) {
	t.Helper()
	ctx := context.Background()
	var ids, mutated []frame.ID
	for _, f := range res.Frames {
		id := f.Identity("files")
		ids = append(ids, id)
		m := id
		m.Digest += "-contextgraph-conformance-mutated"
		mutated = append(mutated, m)
	}
	vs, _ := p.Verify(ctx, ids)
	for _, v := range vs {
		if v.Status != wire.StatusValid {
			t.Errorf("verify served digest: %+v", v)
		}
	}
	vs, _ = p.Verify(ctx, mutated)
	for _, v := range vs {
		if v.Status != wire.StatusStale || v.ReplacementDigest == "" {
			t.Errorf("verify mutated digest: %+v", v)
		}
	}
	vs, _ = p.Verify(ctx, []frame.ID{{Provider: "files", Frame: "nope.md#L1-2", Digest: ids[0].Digest}, {Provider: "files", Frame: "../etc/passwd#L1-2"}, {Provider: "files", Frame: res.Frames[0].ID}})
	if vs[0].Status != wire.StatusGone || vs[1].Status != wire.StatusGone || vs[2].Status != wire.StatusUnknown {
		t.Errorf("verify gone/unknown: %+v", vs)
	}
}

// Platform variants of one file (the same declaration in sibling files,
// scoring alike) are offered once: the budget goes to other answers.
func TestNearCopiesOfferedOnce(t *testing.T) {
	dir := t.TempDir()
	body := "// threadentry starts a new thread for the runtime on this platform.\nstatic void *threadentry(void *v) {\n\treturn v;\n}\n"
	for _, name := range []string{"gcc_linux.c", "gcc_darwin.c", "gcc_freebsd.c"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#include <stdio.h>\n\n"+body+"\n// "+name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "threads.md"), []byte("# Threads\n\nA new thread starts at threadentry, one per platform.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := build(t, dir)
	res, err := p.Query(context.Background(), &frame.Query{Goal: "where does a new thread start", MaxFrames: 8, MaxTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	copies := 0
	for _, f := range res.Frames {
		if strings.Contains(f.Content, "static void *threadentry") {
			copies++
		}
	}
	if copies != 1 || res.DroppedEstimate == nil || *res.DroppedEstimate < 2 {
		t.Errorf("%d copies of the platform chunk offered, dropped %v: %v", copies, res.DroppedEstimate, res.Frames)
	}
}

// Source that defines a thing ranks above tests, testdata, directories the
// Go tool ignores (_gen) and data files that mention it as often.
func TestDefinitionsOutrankTestsAndData(t *testing.T) {
	dir := t.TempDir()
	text := "// Backoff returns the retry delay: exponential backoff with jitter.\nfunc Backoff(n int) int { return n }\n"
	for _, rel := range []string{"retry/backoff_test.go", "retry/testdata/backoff.go", "retry/_gen/backoff.go", "retry/backoff.json", "retry/backoff.go"} {
		content := "package retry\n\n" + text
		if strings.HasSuffix(rel, ".json") {
			content = `{"doc": "Backoff returns the retry delay: exponential backoff with jitter."}` + "\n"
		}
		files.WriteFile(t, dir, rel, content+"\n// "+rel+"\n")
	}
	res, err := build(t, dir).Query(context.Background(), &frame.Query{Goal: "exponential backoff delay", MaxFrames: 8, MaxTokens: 2000})
	if err != nil || len(res.Frames) == 0 {
		t.Fatalf("query: %v %v", res, err)
	}
	if !strings.HasPrefix(res.Frames[0].ID, "retry/backoff.go#") {
		t.Errorf("first frame %s, want the defining source retry/backoff.go", res.Frames[0].ID)
	}
}

// checkWireDiagnostics: the answer says, in its ctxkit:diagnostics member,
// what the index left out by reason (tree has one binary file, one too
// large, one symlink, one hidden directory) and what the answer held back.
func checkWireDiagnostics(t *testing.T, r wire.Result) {
	t.Helper()
	var d files.Diagnostics
	if err := json.Unmarshal(r.Diagnostics, &d); err != nil {
		t.Fatalf("ctxkit:diagnostics %q: %v", r.Diagnostics, err)
	}
	sk := d.Index.Skipped
	if d.Index.Files != 4 || d.Index.State != files.StateMemory || sk.Binary != 1 || sk.TooLarge != 1 || sk.Symlinks != 1 || sk.Hidden != 1 {
		t.Errorf("index diagnostics %+v", d.Index)
	}
	held := d.HeldBack.Weak + d.HeldBack.Copies + d.HeldBack.OverLimits
	if r.DroppedEstimate == nil && held != 0 || r.DroppedEstimate != nil && int(*r.DroppedEstimate) != held {
		t.Errorf("held back %+v, dropped_estimate %v", d.HeldBack, r.DroppedEstimate)
	}
}

// Identifiers yield their parts and the whole; English words are stemmed
// so inflections meet; stop words are dropped.
func TestTerms(t *testing.T) {
	got := strings.Join(files.Terms("How is the BudgetSplit between HTTPServer providers? budgets max_file_size sniffing"), " ")
	if got != "budget split budgetsplit between http server httpserver provid budget max file size maxfilesize snif" {
		t.Errorf("terms = %q", got)
	}
	// Words that name things in code are not stop words: FindAll's "all"
	// and sync.Once's "once" are what a query asks for.
	if got := strings.Join(files.Terms("FindAll runs once"), " "); got != "find all findall run onc" {
		t.Errorf("terms of code words = %q", got)
	}
	if a, b := files.Terms("nested"), files.Terms("nesting"); len(a) != 1 || len(b) != 1 || a[0] != b[0] {
		t.Errorf("nested %v and nesting %v do not meet", a, b)
	}
}

// TestAsOfReadsTheProtocolGrammar: as_of is read by the protocol's one
// timestamp parser, so a leap second (which the F4 grammar accepts) is a pin,
// not a bad request; a pin sent as "" or outside the grammar is refused
// with bad_request naming F4.
func TestAsOfReadsTheProtocolGrammar(t *testing.T) {
	p := build(t, tree(t))
	ctx := context.Background()
	for _, pin := range []string{"2016-12-31T23:59:60Z", "2016-12-31T23:59:60.25Z", "2001-01-01T00:00:00.000000000001Z"} {
		q := sample()
		q.AsOf = pin
		res, err := p.Query(ctx, q)
		if err != nil {
			t.Fatalf("as_of %s refused: %v", pin, err)
		}
		if len(res.Frames) != 0 {
			t.Errorf("as_of %s (before every file) returned %d frames", pin, len(res.Frames))
		}
	}
	q := sample()
	q.AsOf = "9999-12-31T23:59:60Z"
	if res, err := p.Query(ctx, q); err != nil || len(res.Frames) == 0 {
		t.Errorf("a leap-second pin after every file: %d frames, %v", len(res.Frames), err)
	}
	for _, bad := range []string{"", "2026-07-01T00:00:00+00:00", "2026-07-01t00:00:00Z"} {
		q := sample()
		q.Set(frame.MemberAsOf, bad)
		_, err := p.Query(ctx, q)
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != wire.CodeBadRequest || !strings.Contains(we.Message, "F4") {
			t.Errorf("as_of %q: %v, want bad_request naming F4", bad, err)
		}
	}
}
