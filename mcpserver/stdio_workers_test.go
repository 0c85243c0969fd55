package mcpserver_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recv waits for n sends on ch, failing with what after ten seconds.
func recv(t *testing.T, ch chan struct{}, n int, what string) {
	t.Helper()
	for i := range n {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: %d of %d after ten seconds", what, i, n)
		}
	}
}

// noGoroutinesLeft fails t unless, within ten seconds, no more
// goroutines run than the before counted.
func noGoroutinesLeft(t *testing.T, before int) {
	t.Helper()
	ok := false
	for deadline := time.Now().Add(10 * time.Second); !ok && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		ok = runtime.NumGoroutine() <= before
	}
	if !ok {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the session, %d before it:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}

// TestServeStdioCancelsCallsOnWorkers: many more slow calls than a
// session keeps idle workers for all reach the provider at once (none
// waits for another to end), a notifications/cancelled for each, by a
// number or a string id, ends its provider call and gets it answered,
// the session goes on serving, and when it ends no goroutine of it is
// left.
func TestServeStdioCancelsCallsOnWorkers(t *testing.T) {
	const n = 16
	p, slow, before := slowSession(t, n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(100 + i)
		if i%2 == 1 {
			ids[i] = fmt.Sprintf(`"s-%d"`, i)
		}
		p.send(t, slowCall(ids[i]), 0)
	}
	recv(t, slow.started, n, "calls at the provider at once")
	for i, id := range ids {
		got := p.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`,"reason":"test"}}`, 1)[0]
		recv(t, slow.ended, 1, "provider calls ended by their cancellation")
		// The SDK answers a cancelled call with the context's error.
		if !strings.Contains(got, `"id":`+id+`,`) || !strings.Contains(got, `"error"`) {
			t.Errorf("call %d cancelled: answered %s, want an error answer to id %s", i, got, id)
		}
	}
	if got := p.send(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`, 1)[0]; got != `{"jsonrpc":"2.0","id":"after","result":{}}`+"\n" {
		t.Errorf("ping after the cancellations: %s", got)
	}
	if err := p.end(t); err != nil {
		t.Errorf("session end: %v", err)
	}
	noGoroutinesLeft(t, before)
}

// TestServeStdioOddLinesMatchSDKTransport: lines a client may send that
// the stdio session's own decoder takes or leaves to the SDK's (ids
// negative, zero, large, fractional, with escapes, empty or null; white
// space; members unknown or given twice inside params; params an array;
// an unsolicited answer) get, byte for byte, the answers the SDK's own
// stdio transport writes. (White space after the value is left out: the
// SDK's transport ends the session on it, where ServeStdio takes the
// line, a difference older than the decoder.)
func TestServeStdioOddLinesMatchSDKTransport(t *testing.T) {
	lines := []stdioStep{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 1},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{`{"jsonrpc":"2.0","id":-12,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":-0,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":123456789012345,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":2.5,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":3e2,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":"\u00e9\"x","method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":"","method":"ping"}`, 1},
		{" \t{ \"method\" : \"ping\" ,\t\"jsonrpc\":\"2.0\", \"id\" : \"ws\" }\r", 1},
		{`{"jsonrpc":"2.0","id":"p\u0069ng","method":"p\u0069ng"}`, 1},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","arguments":{},"name":"quote_untrusted"}}`, 1},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"quote_untrusted","arguments":{"parts":[{"text":"a"}],"parts":"x"}}}`, 1},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}`, 1},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{},"extra":1}`, 1},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`, 0},
		{`{"jsonrpc":"2.0","id":"r1","result":{}}`, 0},
		{`[{"jsonrpc":"2.0","id":-3,"method":"ping"},{"jsonrpc":"2.0","id":"b\u0032","method":"ping"}]`, 1},
		{`{"jsonrpc":"2.0","id":"last","method":"ping"}`, 1},
	}
	matchesSDKTransport(t, func() *mcp.Server { return newServer(t, nil, nil) }, lines)
}

// TestServeStdioClientGoneLeavesNothing: a client that goes away with
// more calls in flight than the session keeps idle workers for ends each
// provider call, the session returns, and none of its goroutines is left.
func TestServeStdioClientGoneLeavesNothing(t *testing.T) {
	const n = 8
	p, slow, before := slowSession(t, n)
	for i := range n {
		p.send(t, slowCall(fmt.Sprint(i+1)), 0)
	}
	recv(t, slow.started, n, "calls at the provider at once")
	_ = p.in.Close()
	recv(t, slow.ended, n, "provider calls ended by the client going away")
	select {
	case err := <-p.served:
		if err != nil {
			t.Errorf("session end: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end after the client went away")
	}
	noGoroutinesLeft(t, before)
}
