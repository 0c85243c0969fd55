package mcpserver_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/mcpserver"
)

// stdioPeer is a server session over pipes, driven line by line.
type stdioPeer struct {
	in     *io.PipeWriter
	out    *bufio.Reader
	served chan error
}

// startStdio serves srv on pipes with serveFn (ServeStdio, or the SDK's
// IOTransport for comparison).
func startStdio(t *testing.T, serveFn func(ctx context.Context, in io.Reader, out io.Writer) error) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{in: inW, out: bufio.NewReaderSize(outR, 1<<20), served: make(chan error, 1)}
	go func() {
		p.served <- serveFn(context.Background(), inR, outW)
		_ = outW.Close()
	}()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	return p
}

func sdkStdio(srv *mcp.Server) func(context.Context, io.Reader, io.Writer) error {
	return func(ctx context.Context, in io.Reader, out io.Writer) error {
		return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{out}})
	}
}

func ctxkitStdio(srv *mcp.Server) func(context.Context, io.Reader, io.Writer) error {
	return func(ctx context.Context, in io.Reader, out io.Writer) error {
		return mcpserver.ServeStdio(ctx, srv, in, out)
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// send writes one line and, when want > 0, returns the next want lines.
func (p *stdioPeer) send(t *testing.T, line string, want int) []string {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatalf("write %.80s: %v", line, err)
	}
	var got []string
	for range want {
		l, err := p.out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %.80s: %v", line, err)
		}
		got = append(got, l)
	}
	return got
}

// initialize runs the handshake on p in the protocol version given.
func (p *stdioPeer) initialize(t *testing.T, version string) {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 1)
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0)
}

// slowSession is an initialized ServeStdio session on a server whose
// host is slowHost(t, n), and the number of goroutines that ran before
// the session started.
func slowSession(t *testing.T, n int) (p *stdioPeer, slow *slowServer, before int) {
	t.Helper()
	h, slow := slowHost(t, n)
	srv := newServer(t, h, nil)
	before = runtime.NumGoroutine()
	p = startStdio(t, ctxkitStdio(srv))
	p.initialize(t, "2025-06-18")
	return p, slow, before
}

// slowCall is a query_context call with the JSON id given, which a
// slowSession's provider holds until the call's context ends.
func slowCall(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"query_context","arguments":{"goal":"x"}}}`
}

// end closes the client's side and returns how the server's session ended.
func (p *stdioPeer) end(t *testing.T) error {
	t.Helper()
	_ = p.in.Close()
	select {
	case err := <-p.served:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after its input closed")
		return nil
	}
}

// stdioStep is one line a client sends and how many lines answer it.
type stdioStep struct {
	line    string
	answers int
}

// matchesSDKTransport runs script on a session over ServeStdio and one
// over the SDK's own stdio transport, each on a server from newSrv, and
// reports every answer line that differs and every session that does not
// end cleanly at EOF.
func matchesSDKTransport(t *testing.T, newSrv func() *mcp.Server, script []stdioStep) {
	t.Helper()
	peers := map[string]*stdioPeer{}
	for name, serveFn := range map[string]func(*mcp.Server) func(context.Context, io.Reader, io.Writer) error{"sdk": sdkStdio, "ctxkit": ctxkitStdio} {
		peers[name] = startStdio(t, serveFn(newSrv()))
	}
	for _, step := range script {
		want := peers["sdk"].send(t, step.line, step.answers)
		got := peers["ctxkit"].send(t, step.line, step.answers)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("after %.100q\nServeStdio wrote %s\nthe SDK wrote   %s", step.line, got[i], want[i])
			}
		}
	}
	for name, p := range peers {
		if err := p.end(t); err != nil {
			t.Errorf("%s: the session ended with %v at EOF, want nil", name, err)
		}
	}
}

// stdioScript is a session that goes through every kind of answer: the
// handshake, lists, each tool's result and error, an unknown tool, ping,
// resources, a batch, and a call in the per-request protocol.
var stdioScript = []stdioStep{
	{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 1},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, 1},
	{`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"query_context","arguments":{"goal":"how many times does the client retry <with> backoff","budget":300}}}`, 1},
	{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"key":"k","parts":[{"text":"Say <b> & go"},{"untrusted":"ignore \"all\"\n\u2028"}]}}}`, 1},
	{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"query_context","arguments":{"goal":""}}}`, 1},
	{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`, 1},
	{`{"jsonrpc":"2.0","id":6,"method":"ping"}`, 1},
	{`{"jsonrpc":"2.0","id":7,"method":"resources/list","params":{}}`, 1},
	{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"assess_request","arguments":{"request":{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]}}}}`, 1},
	{`[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"key":"k","parts":[{"text":"a"}]}}}]`, 1},
	{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"key":"k","parts":[{"text":"a"}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, 1},
	{`{"jsonrpc":"2.0","id":12,"method":"nope"}`, 1},
}

// TestServeStdioMatchesSDKTransport runs one session over ServeStdio and
// over the SDK's own stdio transport and compares the bytes written: the
// connection that skips the SDK's re-encoding of ctxkit's results writes
// exactly what the SDK would.
func TestServeStdioMatchesSDKTransport(t *testing.T) {
	dir := writeDocs(t, 3)
	h := filesHost(t, dir)
	matchesSDKTransport(t, func() *mcp.Server {
		return newServer(t, h, &mcpserver.ServerOptions{Roots: []string{dir}})
	}, stdioScript)
}

// TestServeStdioBatchOnlyBefore20250618: a batch in a session that
// negotiated 2025-06-18 ends it, as with the SDK's transport; before
// that the answers to its calls go out together in the calls' order, and
// its notifications get none (the SDK's transport v1.8.0 waits for an
// answer to the notification too, and so never answers such a batch).
func TestServeStdioBatchOnlyBefore20250618(t *testing.T) {
	for _, version := range []string{"2025-03-26", "2025-06-18"} {
		srv := newServer(t, nil, nil)
		p := startStdio(t, ctxkitStdio(srv))
		p.initialize(t, version)
		batch := `[{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"text":"x"}]}}},` +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},{"jsonrpc":"2.0","id":"a","method":"ping"}]`
		if version == "2025-03-26" {
			got := p.send(t, batch, 1)[0]
			if !strings.HasPrefix(got, `[{"jsonrpc":"2.0","id":"b","result":{"content"`) || !strings.HasSuffix(got, `{"jsonrpc":"2.0","id":"a","result":{}}]`+"\n") {
				t.Errorf("batch answer %s: want both answers in one array, in the calls' order", got)
			}
			if err := p.end(t); err != nil {
				t.Errorf("session end: %v", err)
			}
			continue
		}
		p.send(t, batch, 0)
		if err := p.end(t); err == nil || !strings.Contains(err.Error(), "batching is not supported") {
			t.Errorf("a batch in a %s session: the session ended with %v, want the batching error", version, err)
		}
	}
}

// TestServeStdioEndsOnGarbage: a line that is not one JSON-RPC message
// ends the session with an error saying so, as the SDK's transport does.
func TestServeStdioEndsOnGarbage(t *testing.T) {
	for line, want := range map[string]string{
		`hello`: "not one JSON value",
		`{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`: "not one JSON value",
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`:                                          "version",
		`[]`: "empty batch",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`: "duplicate",
	} {
		srv := newServer(t, nil, nil)
		p := startStdio(t, ctxkitStdio(srv))
		p.send(t, line, 0)
		if err := p.end(t); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("line %s: the session ended with %v, want an error with %q", line, err, want)
		}
	}
}

// TestServeStdioContextEndsSession: a cancelled context ends the session
// at once, even with the client silent and its pipe open.
func TestServeStdioContextEndsSession(t *testing.T) {
	srv := newServer(t, nil, nil)
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserver.ServeStdio(ctx, srv, inR, io.Discard) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeStdio returned %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after its context ended")
	}
}

// TestServeStdioClientGoneMidCall: when the client's end closes during a
// call, the provider's context ends and the session returns.
func TestServeStdioClientGoneMidCall(t *testing.T) {
	p, slow, _ := slowSession(t, 4)
	p.send(t, slowCall("1"), 0)
	<-slow.started
	ended := make(chan error, 1)
	go func() { ended <- p.end(t) }()
	select {
	case <-slow.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's end closing did not end the provider call")
	}
	if err := <-ended; err != nil {
		t.Errorf("session end: %v", err)
	}
}
