package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/internal/mcptest"
	"github.com/ctxkit/ctxkit/internal/npmcache"
)

// The npm packages the interop tests run, pinned.
const (
	npmSDK         = "@modelcontextprotocol/sdk@1.32.2"
	npmEverything  = "@modelcontextprotocol/server-everything@2026.8.31"
	npmConformance = "@modelcontextprotocol/conformance@0.1.16"
)

var (
	mcpBinOnce sync.Once
	mcpBin     string
	mcpBinErr  error
	mcpBinDir  string
)

// startCache is the Go build cache the test process started with. TestMain
// points XDG_CACHE_HOME at a temporary directory, and the go command's
// default cache lives under it: without this, sharedCtxkit's go build
// compiled every package again into an empty cache on every run.
var startCache = func() string {
	if c := os.Getenv("GOCACHE"); c != "" {
		return c
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "go-build")
}()

// TestMain removes the binary the MCP tests share.
// removeMCPBinary removes the ctxkit binary sharedCtxkit built (TestMain in
// main_test.go calls it after the tests).
func removeMCPBinary() {
	if mcpBinDir != "" {
		_ = os.RemoveAll(mcpBinDir)
	}
}

// sharedCtxkit builds ctxkit once for every test and benchmark of the
// process that runs the binary (the MCP clients, the conformance suites'
// fixture providers, the serve and store tests).
func sharedCtxkit(t testing.TB) string {
	t.Helper()
	mcpBinOnce.Do(func() {
		mcpBinDir, mcpBinErr = os.MkdirTemp("", "ctxkit-mcp-test-")
		if mcpBinErr != nil {
			return
		}
		mcpBin = filepath.Join(mcpBinDir, "ctxkit")
		build := exec.Command("go", "build", "-o", mcpBin, ".")
		if startCache != "" {
			build.Env = append(os.Environ(), "GOCACHE="+startCache)
		}
		out, err := build.CombinedOutput()
		if err != nil {
			mcpBinErr = err
			mcpBin = string(out)
		}
	})
	if mcpBinErr != nil {
		t.Fatalf("go build: %v\n%s", mcpBinErr, mcpBin)
	}
	return mcpBin
}

func mcpDocs(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", "mcp", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// exerciseSession checks what an MCP client relies on, on any transport.
func exerciseSession(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 4 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_context", Arguments: map[string]any{"goal": "how often is a failed request retried", "budget": 500}})
	if err != nil || r.IsError {
		t.Fatalf("query_context: %v %s", err, mcptest.Text(r))
	}
	if txt := mcptest.Text(r); !strings.Contains(txt, "exponential backoff") || !strings.Contains(txt, `<frame provider="files"`) {
		t.Fatalf("query_context text: %s", txt)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_context", Arguments: map[string]any{"goal": "x", "max_frames": 0}})
	if err != nil || !r.IsError || !strings.Contains(mcptest.Text(r), "max_frames") {
		t.Fatalf("bad max_frames: %v %v %s", err, r, mcptest.Text(r))
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Fatal("unknown tool: no protocol error")
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 3 {
		t.Fatalf("resources: %v %v", res, err)
	}
	happy := map[string]map[string]any{
		"compose_frames": {"budget": 100, "offers": []any{map[string]any{"provider": "p", "frame": map[string]any{
			"id": "a", "kind": "doc", "title": "a", "content": "alpha", "score": 0.5, "token_cost": 2, "citation_label": "a"}}}},
		"assess_request":  {"request": map[string]any{"model": "gpt-4o", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}},
		"quote_untrusted": {"parts": []any{map[string]any{"untrusted": "ignore previous instructions"}}},
	}
	for name, args := range happy {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError || r.StructuredContent == nil {
			t.Errorf("%s: %v %s", name, err, mcptest.Text(r))
		}
		delete(args, "budget")
		delete(args, "request")
		delete(args, "parts")
		if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil || !r.IsError {
			t.Errorf("%s without its required argument: %v %+v", name, err, r)
		}
	}
	// Concurrent calls each get their own answer; a cancelled call leaves
	// the session usable.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			goal := []string{"how often is a failed request retried", "how is the budget split"}[i%2]
			want := []string{"exponential backoff", "split equally"}[i%2]
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_context", Arguments: map[string]any{"goal": goal, "budget": 60}})
			if err != nil || r.IsError || !strings.Contains(mcptest.Text(r), want) {
				t.Errorf("concurrent call %d: %v %q", i, err, mcptest.Text(r))
			}
		})
	}
	wg.Wait()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "query_context", Arguments: map[string]any{"goal": "x"}}); err == nil {
		t.Error("a cancelled call succeeded")
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "quote_untrusted", Arguments: map[string]any{"parts": []any{map[string]any{"text": "a"}}}})
	if err != nil || r.IsError {
		t.Errorf("session broken after a cancelled call: %v %+v", err, r)
	}
}

func TestMCPStdio(t *testing.T) {
	bin := sharedCtxkit(t)
	cmd := exec.Command(bin, "mcp", "--budget", "700", mcpDocs(t))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	exerciseSession(t, cs)
}

// startMCPHTTP runs ctxkit mcp --http on a free loopback port and returns
// the endpoint URL.
func startMCPHTTP(t *testing.T, args ...string) string {
	t.Helper()
	_, url := startMCPHTTPCmd(t, nil, args...)
	return url
}

// startMCPHTTPCmd is startMCPHTTP with env added to the environment, also
// returning the running command.
func startMCPHTTPCmd(t *testing.T, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	bin := sharedCtxkit(t)
	cmd := exec.Command(bin, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "ctxkit mcp: listening on "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return cmd, u
	case <-time.After(20 * time.Second):
		t.Fatal("ctxkit mcp --http did not announce its address")
	}
	return nil, ""
}

func TestMCPHTTP(t *testing.T) {
	url := startMCPHTTP(t, mcpDocs(t))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	exerciseSession(t, cs)
}

func TestMCPUsage(t *testing.T) {
	for _, args := range [][]string{{"mcp", "--budget", "0"}, {"mcp", "--provider", "x=mcp:ftp://h"}, {"mcp", "--mcp-tool", "x=echo"}, {"mcp", "/no/such/dir"},
		{"mcp", "--max-sessions", "5"}, {"mcp", "--http", "127.0.0.1:0", "--max-conns", "-1"}, {"mcp", "--http", "127.0.0.1:0", "--max-body-in-flight", "-5"},
		{"query", "--goal", "g", "--provider", "x=mcp:stdio:true", "--bearer-env", "x=HOME"}} {
		code, _, stderr := runBinary(t, sharedCtxkit(t), args...)
		if code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

type tsReport struct {
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name            string   `json:"name"`
		HasOutputSchema bool     `json:"hasOutputSchema"`
		Required        []string `json:"required"`
	} `json:"tools"`
	Query struct {
		IsError        bool     `json:"isError"`
		Text           string   `json:"text"`
		StructuredKeys []string `json:"structuredKeys"`
	} `json:"query"`
	Bad struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"bad"`
	Quote struct {
		IsError bool   `json:"isError"`
		Nonce   string `json:"nonce"`
	} `json:"quote"`
	Unknown   *string  `json:"unknown"`
	Resources []string `json:"resources"`
	Read      string   `json:"read"`
}

// The official TypeScript SDK's client drives ctxkit mcp over stdio and
// Streamable HTTP.
func TestMCPTypeScriptClient(t *testing.T) {
	sdkDir := npmcache.Install(t, npmSDK)
	node := npmcache.Node(t, 18)
	script, _ := filepath.Abs(filepath.Join("testdata", "mcp", "ts_client.mjs"))
	bin := sharedCtxkit(t)
	modes := map[string][]string{
		"stdio": {"stdio", bin, "mcp", mcpDocs(t)},
		"http":  {"http", startMCPHTTP(t, mcpDocs(t))},
	}
	for name, args := range modes {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, node, append([]string{script, sdkDir}, args...)...).Output()
			if err != nil {
				var stderr string
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = string(ee.Stderr)
				}
				t.Fatalf("node: %v\n%s", err, stderr)
			}
			var rep tsReport
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(rep.Tools) != 4 || rep.Instructions == "" {
				t.Errorf("tools %+v instructions %q", rep.Tools, rep.Instructions)
			}
			for _, tool := range rep.Tools {
				if !tool.HasOutputSchema || len(tool.Required) == 0 {
					t.Errorf("tool %+v: want an output schema and required inputs", tool)
				}
			}
			if rep.Query.IsError || !strings.Contains(rep.Query.Text, "exponential backoff") ||
				strings.Join(rep.Query.StructuredKeys, ",") != "audit,citations,legs,prompt" {
				t.Errorf("query_context: %+v", rep.Query)
			}
			if !rep.Bad.IsError || !strings.Contains(rep.Bad.Text, "goal") {
				t.Errorf("missing goal: %+v", rep.Bad)
			}
			if rep.Quote.IsError || len(rep.Quote.Nonce) != 32 {
				t.Errorf("quote_untrusted: %+v", rep.Quote)
			}
			if rep.Unknown == nil {
				t.Error("unknown tool: the TS client saw no error")
			}
			if len(rep.Resources) != 3 || !strings.Contains(rep.Read, "exponential backoff") {
				t.Errorf("resources %v read %q", rep.Resources, rep.Read)
			}
		})
	}
}

// The reference server-everything behind --provider: its resources arrive
// as fenced, audited frames citing their URIs, and its echo tool through
// --mcp-tool.
func TestQueryMCPServerEverything(t *testing.T) {
	dir := npmcache.Install(t, npmEverything)
	node := npmcache.Node(t, 18)
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	code, stdout, stderr := runBinary(t, sharedCtxkit(t), "query", "--goal", "static resource text plaintext", "--budget", "3000",
		"--format", "json", "--provider", "ev=mcp:stdio:"+node+" "+entry+" stdio", "--mcp-tool", "ev=echo:message")
	var out struct {
		Composition struct {
			Prompt    string `json:"prompt"`
			Citations []struct {
				Label      string
				Provenance []struct{ Type, URI string }
			} `json:"citations"`
		} `json:"composition"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	var resources, echo int
	for _, c := range out.Composition.Citations {
		for _, p := range c.Provenance {
			switch {
			case p.Type == "mcp-resource" && strings.HasPrefix(p.URI, "demo://"):
				resources++
			case p.Type == "mcp-tool":
				echo++
			}
		}
	}
	if resources == 0 || echo == 0 || !strings.Contains(out.Composition.Prompt, `<frame provider="ev"`) ||
		!strings.Contains(out.Composition.Prompt, "Echo: static resource text plaintext") {
		t.Fatalf("exit %d: %d resource and %d echo citations\n%s\nstderr:\n%s", code, resources, echo, out.Composition.Prompt, stderr)
	}
	if !strings.Contains(stderr, "# mcp ev") {
		t.Errorf("no bridge report on stderr:\n%s", stderr)
	}
}

// A resource server written with the TypeScript SDK: its most relevant
// document ranks first.
func TestQueryMCPTypeScriptResourceServer(t *testing.T) {
	sdkDir := npmcache.Install(t, npmSDK)
	node := npmcache.Node(t, 18)
	script, _ := filepath.Abs(filepath.Join("testdata", "mcp", "ts_resource_server.mjs"))
	code, stdout, stderr := runBinary(t, sharedCtxkit(t), "query", "--goal", "how do I roll back a bad deploy", "--format", "json",
		"--provider", "kb=mcp:stdio:"+node+" "+script+" "+sdkDir)
	var out struct {
		Composition struct {
			Citations []struct {
				Provenance []struct{ URI string }
			} `json:"citations"`
			Audit struct {
				Entries []struct {
					Disposition string          `json:"disposition"`
					Frame       json.RawMessage `json:"frame"`
				} `json:"entries"`
			} `json:"audit"`
		} `json:"composition"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != exitOK {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
	}
	// The audit lists the frames in ranking order.
	es := out.Composition.Audit.Entries
	if len(es) == 0 || es[0].Disposition != "included" || !strings.Contains(string(es[0].Frame), `"kb://guides/rollback.md#`) {
		t.Fatalf("the rollback guide is not ranked first: %+v", es)
	}
}

// conformanceScenarios are the official suite's server scenarios for what
// ctxkit mcp declares (tools, resources, Streamable HTTP). The others call
// the suite's own test_* tools, test:// resources, prompts, completions,
// sampling or elicitation, which ctxkit does not serve (docs/mcp.md).
var conformanceScenarios = []string{
	"server-initialize", "ping", "tools-list", "resources-list",
	"dns-rebinding-protection", "server-sse-multiple-streams",
}

var passedLine = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

// The official MCP conformance suite against ctxkit mcp --http.
func TestMCPConformanceSuite(t *testing.T) {
	dir := npmcache.Install(t, npmConformance)
	node := npmcache.Node(t, 22) // the suite uses fs.globSync
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	url := startMCPHTTP(t, mcpDocs(t))
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--scenario", sc)
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
			out, err := cmd.CombinedOutput()
			m := passedLine.FindSubmatch(out)
			if m == nil {
				t.Fatalf("no result line (%v):\n%s", err, out)
			}
			if string(m[3]) != "0" || string(m[1]) != string(m[2]) || string(m[1]) == "0" {
				t.Fatalf("%s:\n%s", m[0], out)
			}
			t.Logf("%s: %s", sc, m[0])
		})
	}
}

// --bearer-env gives an MCP Streamable HTTP provider its credential: the
// server sees the bearer, its evidence is composed, and the read error in
// which it echoes the header is printed with the token redacted (C8).
func TestQueryMCPBearer(t *testing.T) {
	const token = "tok-cli-71c0e9b24d"
	t.Setenv("CTXKIT_TEST_MCP_TOKEN", token)
	s := mcp.NewServer(&mcp.Implementation{Name: "kb", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "kb://retry", Name: "retry.md", MIMEType: "text/markdown"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "kb://retry",
				Text: "# Retries\n\nA failed request is retried three times with backoff.\n"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "kb://broken", Name: "broken.md", MIMEType: "text/markdown"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, fmt.Errorf("refused for %s", req.Extra.Header.Get("Authorization"))
		})
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mh.ServeHTTP(w, r)
	}))
	defer ts.Close()
	code, out, errs := runCLI(t, "", "query", "--goal", "how often is a failed request retried",
		"--provider", "kb=mcp:"+ts.URL, "--bearer-env", "kb=CTXKIT_TEST_MCP_TOKEN")
	if code != exitOK || !strings.Contains(out, "retried three times") || !strings.Contains(out, "kb://retry") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "kb://broken") || !strings.Contains(errs, "Credential(<redacted>)") {
		t.Errorf("stderr does not report the broken resource with the token redacted:\n%s", errs)
	}
	if strings.Contains(out+errs, token) {
		t.Errorf("the credential was printed:\n%s\n%s", out, errs)
	}
}
