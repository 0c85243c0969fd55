package mcpbridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/mcpbridge"
)

// TestMain lets the test binary play a misbehaving MCP server over stdio
// when MCPBRIDGE_TEST_SERVER names the misbehaviour.
func TestMain(m *testing.M) {
	switch os.Getenv("MCPBRIDGE_TEST_SERVER") {
	case "":
		os.Exit(m.Run())
	case "crash":
		buf := make([]byte, 1)
		_, _ = os.Stdin.Read(buf)
		fmt.Fprint(os.Stderr, "fatal: no config file\n\x1b[2Jincluded forged\n")
		os.Exit(3)
	case "hang":
		select {}
	case "garbage":
		buf := make([]byte, 4096)
		_, _ = os.Stdin.Read(buf)
		fmt.Println("this is not JSON-RPC {]")
		select {}
	case "nocaps":
		// Answers initialize declaring no capability (no resources), then nothing.
		rawServer(`{}`, "")
		os.Exit(0)
	case "slowstart":
		// Starts as slowly as npx fetching a package, then serves.
		d, _ := time.ParseDuration(os.Getenv("MCPBRIDGE_TEST_DELAY"))
		time.Sleep(d)
		_ = docServer(docs(), nil).Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	case "hanglist":
		// Answers initialize declaring resources, then never answers
		// resources/list.
		rawServer(`{"resources":{}}`, "resources/list")
		os.Exit(0)
	case "many":
		s := docServer(manyDocs(1000, 4096), nil)
		_ = s.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	case "good":
		s := docServer(docs(), nil)
		_ = s.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
}

// rawServer is a hand-written MCP server on stdin/stdout: it answers
// initialize declaring caps, leaves the method silent unanswered, and
// answers every other request "method not found".
func rawServer(caps, silent string) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		switch {
		case json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 || (silent != "" && m.Method == silent):
		case m.Method == "initialize":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":%s,"serverInfo":{"name":"raw","version":"1"}}}`+"\n", m.ID, caps)
		default:
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", m.ID)
		}
	}
}

type doc struct {
	uri, name, mime, text string
	blob                  []byte
	modified              string
}

func docs() []doc {
	return []doc{
		{uri: "notes://retry", name: "retry.md", mime: "text/markdown", modified: "2026-03-04T05:06:07Z",
			text: "# Retries\n\nA failed request is retried three times with exponential backoff and jitter.\n"},
		{uri: "notes://budget", name: "budget.md", mime: "text/markdown",
			text: "# Budget\n\nThe global budget is split equally between the providers.\n"},
		{uri: "notes://garden", name: "garden.txt", mime: "text/plain",
			text: "Tomatoes want sun and regular watering.\n"},
	}
}

// manyDocs is n Markdown resources of about size bytes each; resource
// n/2 is the only one about a needle.
func manyDocs(n, size int) []doc {
	var ds []doc
	for i := range n {
		body := fmt.Sprintf("# Note %d\n\n", i) + strings.Repeat("words about many other things ", size/30) + "\n"
		if i == n/2 {
			body = "# Needle\n\nThe needle is in this resource.\n"
		}
		ds = append(ds, doc{uri: fmt.Sprintf("notes://%04d", i), name: fmt.Sprintf("%04d.md", i), mime: "text/markdown", text: body})
	}
	return ds
}

// docServer is an MCP server with the given resources (and a search tool
// when search is set).
func docServer(ds []doc, opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs-server", Version: "1"}, opts)
	for _, d := range ds {
		r := &mcp.Resource{URI: d.uri, Name: d.name, MIMEType: d.mime}
		if d.modified != "" {
			r.Annotations = &mcp.Annotations{LastModified: d.modified}
		}
		s.AddResource(r, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: d.uri, MIMEType: d.mime, Text: d.text, Blob: d.blob}}}, nil
		})
	}
	return s
}

// serveHTTP serves s over Streamable HTTP on loopback.
func serveHTTP(t *testing.T, s *mcp.Server) string {
	t.Helper()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func query(t *testing.T, p *mcpbridge.Provider, goal string, maxTokens uint32) []frame.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.Query(ctx, &frame.Query{Goal: goal, MaxFrames: 16, MaxTokens: maxTokens})
	if err != nil {
		t.Fatal(err)
	}
	var used uint32
	for _, f := range res.Frames {
		if v := f.Validate(); len(v) > 0 {
			t.Errorf("frame %s invalid: %v", f.ID, v)
		}
		used += f.TokenCost
	}
	if used > maxTokens {
		t.Errorf("frames cost %d > max_tokens %d", used, maxTokens)
	}
	return res.Frames
}

func newProvider(t *testing.T, target mcpbridge.Target, o *mcpbridge.Options) *mcpbridge.Provider {
	t.Helper()
	p, err := mcpbridge.New("docs", target, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

func TestResourcesRankedWithProvenance(t *testing.T) {
	p := newProvider(t, mcpbridge.Target{URL: serveHTTP(t, docServer(docs(), nil))}, nil)
	fs := query(t, p, "how often is a failed request retried", 1000)
	if len(fs) == 0 || fs[0].URI != "notes://retry" {
		t.Fatalf("first frame %+v, want notes://retry", fs)
	}
	f := fs[0]
	pv := f.Provenance[0]
	if pv.Type != mcpbridge.ProvenanceResource || pv.URI != "notes://retry" || pv.By != "docs-server" || pv.Range == "" {
		t.Errorf("provenance %+v", pv)
	}
	if f.ValidFrom != "2026-03-04T05:06:07Z" {
		t.Errorf("valid_from %q, want the lastModified annotation", f.ValidFrom)
	}
	if f.TokenCost != uint32(frame.BudgetTokens([]byte(f.Content))) || !strings.Contains(f.Content, "exponential backoff") {
		t.Errorf("token_cost %d for %q", f.TokenCost, f.Content)
	}
	if r := p.Report(); r.Listed != 3 || r.Read != 3 || len(r.Left) != 0 {
		t.Errorf("report %+v", r)
	}
}

func TestPaginationBinaryAndHuge(t *testing.T) {
	ds := docs()
	for i := range 30 {
		ds = append(ds, doc{uri: fmt.Sprintf("notes://n%02d", i), name: fmt.Sprintf("n%02d.txt", i), mime: "text/plain", text: fmt.Sprintf("note %d on gardening\n", i)})
	}
	ds = append(ds,
		doc{uri: "notes://logo", name: "logo.png", mime: "image/png", blob: []byte{0x89, 'P', 'N', 'G'}},
		doc{uri: "notes://blob", name: "blob", blob: []byte{0, 1, 2, 3}},
		doc{uri: "notes://huge", name: "huge.txt", mime: "text/plain", text: strings.Repeat("retry retry backoff ", 20000)},
	)
	p := newProvider(t, mcpbridge.Target{URL: serveHTTP(t, docServer(ds, &mcp.ServerOptions{PageSize: 7}))},
		&mcpbridge.Options{MaxResourceBytes: 64 << 10})
	fs := query(t, p, "retried with exponential backoff", 500)
	if len(fs) == 0 || fs[0].URI != "notes://retry" {
		t.Fatalf("frames %+v", fs)
	}
	r := p.Report()
	if r.Listed != len(ds) {
		t.Errorf("listed %d of %d over several pages", r.Listed, len(ds))
	}
	reasons := map[string]string{}
	for _, l := range r.Left {
		reasons[l.URI] = l.Reason
	}
	want := map[string]string{"notes://logo": "binary", "notes://blob": "binary", "notes://huge": "too_large"}
	for uri, reason := range want {
		if reasons[uri] != reason {
			t.Errorf("%s left out as %q, want %q (report %+v)", uri, reasons[uri], reason, r.Left)
		}
	}
	if len(r.Left) != len(want) {
		t.Errorf("left out %+v, want only %v", r.Left, want)
	}
}

func TestByteAndReadCaps(t *testing.T) {
	var ds []doc
	for i := range 1000 {
		ds = append(ds, doc{uri: fmt.Sprintf("notes://%04d", i), name: fmt.Sprintf("%04d.md", i), mime: "text/markdown",
			text: fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat("words about many things ", 40))})
	}
	ds[777].text = "# Needle\n\nThe needle is in resource seven hundred seventy seven.\n"
	p := newProvider(t, mcpbridge.Target{URL: serveHTTP(t, docServer(ds, nil))}, &mcpbridge.Options{MaxBytes: 2 << 20})
	start := time.Now()
	fs := query(t, p, "where is the needle", 400)
	elapsed := time.Since(start)
	if len(fs) == 0 || fs[0].URI != "notes://0777" {
		t.Fatalf("needle not first: %+v", fs)
	}
	r := p.Report()
	if r.Listed != 1000 || r.Read != 1000 || r.Bytes > 2<<20 {
		t.Errorf("report listed=%d read=%d bytes=%d", r.Listed, r.Read, r.Bytes)
	}
	t.Logf("1000 resources listed, read and ranked in %v", elapsed)

	small := newProvider(t, mcpbridge.Target{URL: serveHTTP(t, docServer(ds, nil))}, &mcpbridge.Options{MaxBytes: 64 << 10, MaxReads: 50})
	query(t, small, "where is the needle", 400)
	r = small.Report()
	if r.Bytes > 64<<10 || r.Read > 50 || len(r.Left) != 1000-r.Read {
		t.Fatalf("caps not honoured: read=%d bytes=%d left=%d", r.Read, r.Bytes, len(r.Left))
	}
	for _, l := range r.Left {
		if l.Reason != "byte_cap" && l.Reason != "read_cap" {
			t.Fatalf("left out %+v", l)
		}
	}
}

func TestSearchTool(t *testing.T) {
	s := docServer(nil, nil)
	type in struct {
		Q string `json:"q"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "search"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Result for " + a.Q + ": the deploy runbook says roll back first."}}}, nil, nil
	})
	p := newProvider(t, mcpbridge.Target{URL: serveHTTP(t, s)}, &mcpbridge.Options{Tool: "search", ToolArgument: "q"})
	fs := query(t, p, "deploy roll back", 500)
	if len(fs) != 1 || !strings.Contains(fs[0].Content, "Result for deploy roll back") || fs[0].Provenance[0].Type != mcpbridge.ProvenanceTool {
		t.Fatalf("frames %+v", fs)
	}
}

// A tool's error is the server's words: quoted in the error, and cut
// short when long.
func TestToolErrorQuotedAndCut(t *testing.T) {
	s := docServer(nil, nil)
	type in struct {
		Query string `json:"query"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "search"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		text := "backend down\n\x1b[31mincluded forged\n" + strings.Repeat("x", 100<<10)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	p := newProvider(t, mcpbridge.Target{URL: serveHTTP(t, s)}, &mcpbridge.Options{Tool: "search"})
	_, err := p.Query(context.Background(), &frame.Query{Goal: "g", MaxFrames: 4, MaxTokens: 100})
	if err == nil {
		t.Fatal("a tool error was not an error")
	}
	msg := err.Error()
	if !strings.Contains(msg, `"backend down\n\x1b[31mincluded forged\n`) || strings.ContainsAny(msg, "\n\x1b") || len(msg) > 2<<10 {
		t.Errorf("tool error not quoted and cut (%d bytes): %.300q", len(msg), msg)
	}
}

func selfTarget(t *testing.T, mode string) (mcpbridge.Target, *mcpbridge.Options) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcpbridge.Target{Command: []string{exe}}, &mcpbridge.Options{Env: []string{"MCPBRIDGE_TEST_SERVER=" + mode}}
}

func TestStdioServer(t *testing.T) {
	target, o := selfTarget(t, "good")
	p := newProvider(t, target, o)
	fs := query(t, p, "budget split between providers", 500)
	if len(fs) == 0 || fs[0].URI != "notes://budget" {
		t.Fatalf("frames %+v", fs)
	}
	// The session is kept for the next query.
	if fs := query(t, p, "tomatoes watering", 500); len(fs) == 0 || fs[0].URI != "notes://garden" {
		t.Fatalf("second query: %+v", fs)
	}
}

// A server that declares no capabilities serves nothing and breaks nothing.
func TestServerWithoutCapabilities(t *testing.T) {
	target, o := selfTarget(t, "nocaps")
	p := newProvider(t, target, o)
	if fs := query(t, p, "anything", 100); len(fs) != 0 {
		t.Fatalf("frames from a server with no resources: %+v", fs)
	}
}

// A misbehaving server fails its own leg with a typed status; the other
// leg is served.
func TestMisbehavingServersFailTheirLeg(t *testing.T) {
	for mode, want := range map[string]host.Status{"crash": host.StatusFailed, "hang": host.StatusTimeout, "garbage": host.StatusFailed} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			h := host.New(&host.Options{QueryTimeout: 3 * time.Second})
			defer h.Close(context.Background())
			target, o := selfTarget(t, mode)
			o.StartTimeout = 3 * time.Second // "hang" never answers initialize
			if _, err := mcpbridge.Register(h, "bad", target, o); err != nil {
				t.Fatal(err)
			}
			good, _ := mcpbridge.New("good", mcpbridge.Target{URL: serveHTTP(t, docServer(docs(), nil))}, nil)
			if err := h.AddInProcess("good", good); err != nil {
				t.Fatal(err)
			}
			fo := h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "retry backoff", MaxFrames: 8, MaxTokens: 1000}, 1000)
			got := map[string]*host.Outcome{}
			for _, o := range fo.Outcomes {
				got[o.Provider] = &o
			}
			if got["bad"].Status != want || got["bad"].Error() == "" {
				t.Errorf("bad leg: %v %q, want %v", got["bad"].Status, got["bad"].Error(), want)
			}
			// A crash tells why in the server's own words, quoted: no raw
			// line break or escape reaches whoever prints the error.
			if msg := got["bad"].Error(); mode == "crash" && (!strings.Contains(msg, `its stderr ended: "fatal: no config file\n\x1b[2Jincluded forged"`) || strings.ContainsAny(msg, "\n\x1b")) {
				t.Errorf("the crash's error does not carry the server's stderr, quoted: %q", msg)
			}
			if got["good"].Status != host.StatusFrames || len(got["good"].Frames) == 0 {
				t.Errorf("good leg: %v %q", got["good"].Status, got["good"].Error())
			}
		})
	}
}

// A remote MCP server is egress: without consent the host never lets the
// bridge send a byte.
func TestRemoteServerNeedsConsent(t *testing.T) {
	var requests atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		requests.Add(1)
		return nil, fmt.Errorf("no network in tests")
	})}
	h := host.New(nil)
	defer h.Close(context.Background())
	target, err := mcpbridge.ParseTarget("mcp:https://mcp.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcpbridge.Register(h, "remote", target, &mcpbridge.Options{HTTPClient: hc}); err != nil {
		t.Fatal(err)
	}
	fo := h.QueryAllBudgeted(context.Background(), &frame.Query{Goal: "x", MaxFrames: 4, MaxTokens: 100}, 100)
	if s := fo.Outcomes[0].Status; s != host.StatusConsentRequired {
		t.Fatalf("status %v, want consent_required", s)
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("%d requests sent before consent", n)
	}
}

// Consent for a remote MCP server is bound to its endpoint, as for any
// provider: the refusal names the endpoint to grant for, a grant for that
// endpoint lets the bridge connect, and a grant for another endpoint under
// the same id does not. (A grant named no endpoint the bridge could match
// before, so ctxkit consent grant could never cover an MCP server.)
func TestRemoteServerConsentBoundToEndpoint(t *testing.T) {
	var requests atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		requests.Add(1)
		return nil, fmt.Errorf("no network in tests")
	})}
	const endpoint = "https://mcp.example.com/mcp"
	q := &frame.Query{Goal: "x", MaxFrames: 4, MaxTokens: 100}
	for _, c := range []struct {
		granted string
		covered bool
	}{{"https://other.example.com/mcp", false}, {endpoint, true}} {
		h := host.New(nil)
		target, err := mcpbridge.ParseTarget("mcp:" + endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mcpbridge.Register(h, "remote", target, &mcpbridge.Options{HTTPClient: hc}); err != nil {
			t.Fatal(err)
		}
		rec := consent.Record{ProviderID: "remote", GrantedScope: "egress", DataFlow: frame.DataFlow{Egress: true},
			Endpoint: c.granted, ProviderName: "ctxkit-mcp-bridge"}
		if err := h.Consent().Record(rec); err != nil {
			t.Fatal(err)
		}
		before := requests.Load()
		leg := h.QueryAllBudgeted(context.Background(), q, 100).Outcomes[0]
		sent := requests.Load() > before
		var ce *host.ConsentError
		switch {
		case c.covered && (leg.Status == host.StatusConsentRequired || !sent):
			t.Errorf("granted for %s: leg %v (%v), sent %v: the grant should cover the server", c.granted, leg.Status, leg.Error(), sent)
		case !c.covered && (leg.Status != host.StatusConsentRequired || sent):
			t.Errorf("granted for %s: leg %v, sent %v: want consent_required and nothing sent", c.granted, leg.Status, sent)
		case !c.covered && (!errors.As(leg.Err, &ce) || ce.Endpoint != endpoint || !strings.Contains(leg.Error(), endpoint)):
			t.Errorf("the refusal does not name the endpoint to grant for: %v", leg.Error())
		}
		h.Close(context.Background())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestParseTarget(t *testing.T) {
	good := map[string]mcpbridge.Target{
		"mcp:stdio:npx -y server":    {Command: []string{"npx", "-y", "server"}},
		"mcp:https://h.example/mcp":  {URL: "https://h.example/mcp"},
		"mcp:http://127.0.0.1:9/mcp": {URL: "http://127.0.0.1:9/mcp"},
		"mcp:http://localhost/mcp":   {URL: "http://localhost/mcp"},
	}
	for spec, want := range good {
		got, err := mcpbridge.ParseTarget(spec)
		if err != nil || got.String() != want.String() {
			t.Errorf("%q: %v %v, want %v", spec, got, err, want)
		}
	}
	for _, spec := range []string{"stdio:x", "mcp:stdio:", "mcp:http://h.example/mcp", "mcp:ftp://h/x", "mcp:nothing"} {
		if _, err := mcpbridge.ParseTarget(spec); err == nil {
			t.Errorf("%q accepted", spec)
		}
	}
	if (mcpbridge.Target{URL: "https://h.example/mcp"}).Remote() != true || (mcpbridge.Target{URL: "http://[::1]:8/mcp"}).Remote() {
		t.Error("Remote is wrong")
	}
}

// BenchmarkBridgeStdio1000 queries an MCP server over stdio with 1,000
// resources of 4 KiB (4 MiB in all) under an 8 MiB and a 1 MiB byte cap,
// reporting the resources read and the peak heap in use.
func BenchmarkBridgeStdio1000(b *testing.B) {
	for _, limit := range []int64{8 << 20, 1 << 20} {
		b.Run(fmt.Sprintf("cap=%dMiB", limit>>20), func(b *testing.B) {
			exe, _ := os.Executable()
			p, err := mcpbridge.New("many", mcpbridge.Target{Command: []string{exe}},
				&mcpbridge.Options{Env: []string{"MCPBRIDGE_TEST_SERVER=many"}, MaxBytes: limit})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Shutdown(context.Background())
			var peak uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				var ms runtime.MemStats
				for {
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse)
					}
				}
			}()
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				res, err := p.Query(ctx, &frame.Query{Goal: "where is the needle", MaxFrames: 8, MaxTokens: 500})
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if limit >= 8<<20 && (len(res.Frames) == 0 || res.Frames[0].URI != "notes://0500") {
					b.Fatalf("needle not first: %+v", res.Frames)
				}
			}
			close(stop)
			<-done
			r := p.Report()
			b.ReportMetric(float64(r.Read), "read")
			b.ReportMetric(float64(r.Bytes)/(1<<20), "read-MiB")
			b.ReportMetric(float64(peak-min(peak, base.HeapInuse))/(1<<20), "peak-heap-MiB")
		})
	}
}
