package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/mcpserver"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// limitedServer serves a tool-less ctxkit MCP server over HTTP with o.
func limitedServer(t *testing.T, h *host.Host, o *mcpserver.HTTPOptions) (*mcp.Server, *httptest.Server) {
	t.Helper()
	srv, err := mcpserver.NewServer(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcpserver.HTTPHandler(srv, o))
	t.Cleanup(ts.Close)
	return srv, ts
}

// mcpRequest is a Streamable HTTP request to url with body (none when
// empty), on session id when it is not empty.
func mcpRequest(ctx context.Context, method, url, id, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, method, url+mcpserver.Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

// send sends req and returns the status, the headers and the answer.
func send(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, string(b)
}

// post sends one JSON-RPC message, on session id when it is not empty, and
// returns the status and the session id the answer names.
func post(t *testing.T, url, id, body string) (int, string) {
	t.Helper()
	code, h, _ := send(t, mcpRequest(context.Background(), http.MethodPost, url, id, body))
	return code, h.Get("Mcp-Session-Id")
}

// postRaw sends body on session id and returns the status and the answer.
func postRaw(t *testing.T, url, id, body string) (int, string) {
	t.Helper()
	code, _, answer := send(t, mcpRequest(context.Background(), http.MethodPost, url, id, body))
	return code, answer
}

// openSession initializes a session and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	code, id := post(t, url, "", initializeBody)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", code, id)
	}
	if code, _ := post(t, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: %d", code)
	}
	return id
}

func ping(t *testing.T, url, id string) int {
	code, _ := post(t, url, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	return code
}

func countSessions(s *mcp.Server) int {
	n := 0
	for range s.Sessions() {
		n++
	}
	return n
}

// Sessions a client dropped without deleting them do not pile up: past
// the limit, each new session closes the one idle longest, so the server
// holds at most MaxSessions however many clients came and went.
func TestHTTPSessionsAreBounded(t *testing.T) {
	srv, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxSessions: 3})
	var ids []string
	for range 12 {
		ids = append(ids, openSession(t, ts.URL))
		if n := countSessions(srv); n > 3 {
			t.Fatalf("%d sessions open, limit 3", n)
		}
	}
	for i, id := range ids {
		code := ping(t, ts.URL, id)
		if i < len(ids)-3 && code != http.StatusNotFound {
			t.Errorf("session %d of %d (evicted) answered %d, want 404", i, len(ids), code)
		}
		if i >= len(ids)-3 && code != http.StatusOK {
			t.Errorf("session %d of %d (among the newest 3) answered %d", i, len(ids), code)
		}
	}
}

// The session evicted is the one idle longest, not the oldest: a session
// in use survives newer ones that went quiet.
func TestHTTPEvictsTheIdleLongest(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxSessions: 2})
	a := openSession(t, ts.URL)
	b := openSession(t, ts.URL)
	if ping(t, ts.URL, a) != http.StatusOK {
		t.Fatal("ping a")
	}
	openSession(t, ts.URL) // b is idle longest
	if c := ping(t, ts.URL, a); c != http.StatusOK {
		t.Errorf("the recently used session answered %d", c)
	}
	if c := ping(t, ts.URL, b); c != http.StatusNotFound {
		t.Errorf("the idle-longest session answered %d, want 404", c)
	}
}

// A session with a call in flight is never closed for a newcomer; with
// every session busy, a new one is refused with 503 and Retry-After, and
// is let in once a call ends.
func TestHTTPRefusesANewSessionWhenAllAreBusy(t *testing.T) {
	// The calls end at the host's timeout: a client going away does not
	// cancel a call under protocol versions before 2026-07-28.
	h := host.New(&host.Options{QueryTimeout: 2 * time.Second})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	slow := &slowServer{started: make(chan struct{}, 2), ended: make(chan struct{}, 2)}
	if err := h.AddInProcess("slow", slow); err != nil {
		t.Fatal(err)
	}
	_, ts := limitedServer(t, h, &mcpserver.HTTPOptions{MaxSessions: 2})
	var cancels []context.CancelFunc
	for range 2 {
		id := openSession(t, ts.URL)
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		req := mcpRequest(ctx, http.MethodPost, ts.URL, id,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"query_context","arguments":{"goal":"x"}}}`)
		go func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		<-slow.started
	}
	code, hdr, msg := send(t, mcpRequest(context.Background(), http.MethodPost, ts.URL, "", initializeBody))
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(msg, "2 sessions") {
		t.Fatalf("all sessions calling: %d Retry-After=%q %q", code, hdr.Get("Retry-After"), msg)
	}
	cancels[0]()
	<-slow.ended
	eventuallyInitializes(t, ts.URL, "a call ended and a new session was still refused")
	cancels[1]()
}

// A stream only listens: sessions that hold streams open do not lock
// newcomers out, and the stream of a session closed for one ends.
func TestHTTPStreamsDoNotHoldSessions(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxSessions: 2})
	var bodies []io.ReadCloser
	for range 2 {
		id := openSession(t, ts.URL)
		resp, err := http.DefaultClient.Do(mcpRequest(context.Background(), http.MethodGet, ts.URL, id, ""))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %d", resp.StatusCode)
		}
		bodies = append(bodies, resp.Body)
		defer resp.Body.Close()
	}
	openSession(t, ts.URL)
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, bodies[0])
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream of the session closed for a newcomer did not end")
	}
}

// A client cannot grow the table by naming sessions that do not exist.
func TestHTTPUnknownSessionIDs(t *testing.T) {
	srv, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxSessions: 2})
	for i := range 50 {
		if c := ping(t, ts.URL, fmt.Sprintf("made-up-%d", i)); c != http.StatusNotFound {
			t.Fatalf("made-up session: %d, want 404", c)
		}
	}
	openSession(t, ts.URL)
	openSession(t, ts.URL)
	if n := countSessions(srv); n != 2 {
		t.Fatalf("%d sessions after two opens", n)
	}
}

// rawPost opens a connection and sends a POST's headers declaring length
// bytes of body, then the first sent bytes of it.
func rawPost(t *testing.T, addr string, length, sent int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", mcpserver.Path, length)
	if sent > 0 {
		if _, err := c.Write([]byte(strings.Repeat(" ", sent))); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func statusOf(t *testing.T, c net.Conn, within time.Duration) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer within %s: %v", within, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Bodies are held against one budget: stalled bodies that hold it leave
// the next one a 503, and ordinary requests go through again once they are
// gone.
func TestHTTPBodiesInFlightAreBounded(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxBodyBytes: 256 << 10, MaxBodyBytesInFlight: 600 << 10, BodyTimeout: time.Minute})
	addr := ts.Listener.Addr().String()
	var stalled []net.Conn
	for range 3 {
		stalled = append(stalled, rawPost(t, addr, 250<<10, 200<<10))
	}
	time.Sleep(200 * time.Millisecond) // let the server read what was sent
	late := rawPost(t, addr, 250<<10, 200<<10)
	if c := statusOf(t, late, 10*time.Second); c != http.StatusServiceUnavailable {
		t.Fatalf("a body past the budget: %d, want 503", c)
	}
	for _, c := range stalled {
		c.Close()
	}
	eventuallyInitializes(t, ts.URL, "the budget was not given back when the stalled bodies went")
}

// eventuallyInitializes retries an initialize for up to 10 s, failing
// with why when none succeeds.
func eventuallyInitializes(t *testing.T, url, why string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if code, _ := post(t, url, "", initializeBody); code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
	}
}

// A declared or actual body over the limit is 413, before or as it is
// read.
func TestHTTPBodyTooLarge(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxBodyBytes: 1 << 10})
	addr := ts.Listener.Addr().String()
	if c := statusOf(t, rawPost(t, addr, 8<<20, 0), 10*time.Second); c != http.StatusRequestEntityTooLarge {
		t.Errorf("declared 8 MiB: %d, want 413", c)
	}
	big := strings.Replace(initializeBody, `"t"`, `"`+strings.Repeat("x", 2<<10)+`"`, 1)
	if c, _ := post(t, ts.URL, "", big); c != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 KiB body: %d, want 413", c)
	}
}

// A body that does not arrive in time is 408, and the slow client's
// connection does not hold the server.
func TestHTTPBodyTimeout(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{BodyTimeout: 200 * time.Millisecond})
	c := rawPost(t, ts.Listener.Addr().String(), 1000, 10)
	if code := statusOf(t, c, 10*time.Second); code != http.StatusRequestTimeout {
		t.Fatalf("a stalled body: %d, want 408", code)
	}
}

// The body deadline bounds only the body: a tool call whose answer takes
// longer than it still gets its answer.
func TestHTTPBodyTimeoutSparesSlowAnswers(t *testing.T) {
	h := host.New(&host.Options{QueryTimeout: 600 * time.Millisecond})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	slow := &slowServer{started: make(chan struct{}, 1), ended: make(chan struct{}, 1)}
	if err := h.AddInProcess("slow", slow); err != nil {
		t.Fatal(err)
	}
	_, ts := limitedServer(t, h, &mcpserver.HTTPOptions{BodyTimeout: 100 * time.Millisecond})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL + mcpserver.Path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	start := time.Now()
	r := call(t, cs, "query_context", map[string]any{"goal": "x"})
	if took := time.Since(start); took < 500*time.Millisecond {
		t.Fatalf("the call took %s: it did not wait for the slow provider", took)
	}
	if r == nil {
		t.Fatal("no answer")
	}
}

// A message made of many tiny values is refused before the SDK decodes
// it, which costs about twenty times its size, and before a tool's
// arguments are decoded into a generic value for the schema check, which
// costs about 150 times: one 4 MiB call would cost hundreds of megabytes.
func TestHTTPMessagesAreBoundedBeforeDecoding(t *testing.T) {
	_, ts := limitedServer(t, nil, nil)
	id := openSession(t, ts.URL)
	for _, c := range []struct{ name, parts string }{
		{"a million empty objects", strings.Repeat(`{},`, 1<<20) + `{}`},
		{"5001 parts", strings.Repeat(`{"untrusted":"x"},`, 5000) + `{"untrusted":"x"}`},
	} {
		msg := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[` + c.parts + `]}}}`
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, answer := postRaw(t, ts.URL, id, msg)
		runtime.ReadMemStats(&after)
		if code != http.StatusBadRequest || !strings.Contains(answer, "array of more than 5000") {
			t.Errorf("%s: %d %q, want 400 naming the array", c.name, code, answer[:min(len(answer), 300)])
		}
		// The body is read once and copied once for the request.
		if alloc, size := after.TotalAlloc-before.TotalAlloc, uint64(len(msg)); alloc > 8*size {
			t.Errorf("%s: %d bytes allocated for a message of %d bytes", c.name, alloc, size)
		}
	}
	if code, answer := postRaw(t, ts.URL, id, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"untrusted":"x"}]}}}`); code != http.StatusOK || strings.Contains(answer, `"isError":true`) {
		t.Fatalf("an ordinary call after: %d %.300s", code, answer)
	}
}

// A JSON-RPC batch (before protocol 2025-06-18) is answered whole, so its
// length is bounded.
func TestHTTPBatchesAreBounded(t *testing.T) {
	_, ts := limitedServer(t, nil, nil)
	pings := func(n int) string {
		var b strings.Builder
		b.WriteString("[" + initializeBody)
		for i := range n {
			fmt.Fprintf(&b, `,{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10)
		}
		return b.String() + "]"
	}
	if code, answer := postRaw(t, ts.URL, "", pings(100)); code != http.StatusBadRequest || !strings.Contains(answer, "batch of more than 64") {
		t.Errorf("a batch of 101: %d %.200s", code, answer)
	}
	if code, answer := postRaw(t, ts.URL, "", pings(10)); code != http.StatusOK {
		t.Errorf("a batch of 11: %d %.200s", code, answer)
	}
}

// A client that never reads its answer does not hold the handler, nor
// the bodies budget it took: each write must finish within the body
// timeout.
func TestHTTPUnreadAnswersAreCutOff(t *testing.T) {
	const size = 2 << 20
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxBodyBytes: size + 4096, MaxBodyBytesInFlight: 1, BodyTimeout: 300 * time.Millisecond})
	id := openSession(t, ts.URL)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"untrusted":"` + strings.Repeat("<", size) + `"}]}}}`
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", mcpserver.Path, id, len(call), call)
	// The budget holds one body: while the unread answer's handler lives,
	// every other call with a body is refused.
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, answer := postRaw(t, ts.URL, id, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"untrusted":"`+strings.Repeat("y", 4096)+`"}]}}}`)
		if code == http.StatusOK {
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("with an answer left unread: %d %.200s", code, answer)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A session whose request body is still arriving is in use: it is not
// closed for a newcomer, and the request gets its answer.
func TestHTTPSessionWithABodyArrivingIsInUse(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxSessions: 1})
	id := openSession(t, ts.URL)
	body := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", mcpserver.Path, id, len(body), body[:10])
	time.Sleep(100 * time.Millisecond)
	if code, _ := post(t, ts.URL, "", initializeBody); code != http.StatusServiceUnavailable {
		t.Errorf("a newcomer while the only session's body arrives: %d, want 503", code)
	}
	fmt.Fprint(c, body[10:])
	if code := statusOf(t, c, 10*time.Second); code != http.StatusOK {
		t.Fatalf("the request whose body was arriving: %d, want 200", code)
	}
}

// A session used before the answer that opened it has ended counts its
// requests right: a batch that opens a session answers slowly, the
// session is used meanwhile, and afterwards it can still be closed for a
// newcomer.
func TestHTTPSessionUsedWhileItsOpeningAnswerIsSent(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxSessions: 1})
	var b strings.Builder
	b.WriteString("[" + initializeBody)
	for i := range 60 {
		fmt.Fprintf(&b, `,{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+10)
	}
	b.WriteString("]")
	resp, err := http.DefaultClient.Do(mcpRequest(context.Background(), http.MethodPost, ts.URL, "", b.String()))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		if rr, err := http.DefaultClient.Do(mcpRequest(ctx, m, ts.URL, id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)); err == nil {
			_, _ = io.Copy(io.Discard, rr.Body)
			rr.Body.Close()
		}
		cancel()
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	eventuallyInitializes(t, ts.URL, "the session used during its opening answer could not be closed for a newcomer")
}

// The message bound follows the API limit the handler is told of.
func TestHTTPMessageBoundFollowsMaxFrames(t *testing.T) {
	_, ts := limitedServer(t, nil, &mcpserver.HTTPOptions{MaxFrames: 10})
	id := openSession(t, ts.URL)
	call := func(n int) (int, string) {
		return postRaw(t, ts.URL, id, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[`+
			strings.TrimSuffix(strings.Repeat(`{"untrusted":"x"},`, n), ",")+`]}}}`)
	}
	if code, answer := call(11); code != http.StatusBadRequest || !strings.Contains(answer, "more than 10 elements") {
		t.Errorf("11 parts under MaxFrames 10: %d %.200s", code, answer)
	}
	if code, _ := call(10); code != http.StatusOK {
		t.Errorf("10 parts under MaxFrames 10: %d", code)
	}
}

// writesRecorder records each Write the handler makes.
type writesRecorder struct {
	*httptest.ResponseRecorder
	writes []string
}

func (w *writesRecorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return w.ResponseRecorder.Write(p)
}

// A tool answer goes to the client in a Write of its own, exactly as the
// tool encoded it, where the SDK's token for it stood: the SDK's JSON-RPC
// and event-stream layers never encode it again (four more copies, each
// grown by doubling; BENCHMARKS.md has the time and bytes this saves).
func TestHTTPToolAnswerIsWrittenInPlace(t *testing.T) {
	srv, err := mcpserver.NewServer(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := mcpserver.HTTPHandler(srv, nil)
	serve := func(id, body string) *writesRecorder {
		req := mcpRequest(context.Background(), http.MethodPost, "http://127.0.0.1", id, body)
		req.Header.Set("Ctxkit-Held-Results", "1") // a client's own value is dropped
		w := &writesRecorder{ResponseRecorder: httptest.NewRecorder()}
		h.ServeHTTP(w, req)
		return w
	}
	id := serve("", initializeBody).Header().Get("Mcp-Session-Id")
	serve(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	text := strings.Repeat("a", 100<<10)
	w := serve(id, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"text":"`+text+`"}]}}}`)
	if w.Code != http.StatusOK {
		t.Fatalf("call: %d %.300s", w.Code, w.Body.String())
	}
	var answer string
	for _, p := range w.writes {
		if strings.HasPrefix(p, `{"content":[{"type":"text","text":`) {
			answer = p
		}
	}
	if answer == "" {
		t.Fatalf("no Write held the answer alone; writes of %d bytes in all:\n%.300s", w.Body.Len(), w.Body.String())
	}
	var result struct {
		Content    []struct{ Text string }
		Structured struct{ Prompt string } `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(answer), &result); err != nil {
		t.Fatalf("the answer written in place is not the result: %v", err)
	}
	if len(result.Content) != 1 || !strings.Contains(result.Content[0].Text, text) || result.Content[0].Text != result.Structured.Prompt {
		t.Errorf("the answer written in place lost its text")
	}
	if strings.Contains(w.Body.String(), "ctxkit.held") {
		t.Errorf("a token reached the client: %.300s", w.Body.String())
	}
}

// BenchmarkHTTPQuote is one quote_untrusted call over Streamable HTTP,
// answer read and dropped, for a small and a large part.
func BenchmarkHTTPQuote(b *testing.B) {
	for _, size := range []int{20 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			srv, err := mcpserver.NewServer(nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(mcpserver.HTTPHandler(srv, nil))
			defer ts.Close()
			code, id := post(&testing.T{}, ts.URL, "", initializeBody)
			if code != http.StatusOK {
				b.Fatalf("initialize: %d", code)
			}
			call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"text":"` + strings.Repeat("a", size) + `"}]}}}`
			b.SetBytes(int64(len(call)))
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.DefaultClient.Do(mcpRequest(context.Background(), http.MethodPost, ts.URL, id, call))
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
