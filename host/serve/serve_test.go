package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/wire"
)

// fixed serves one frame per query and counts the queries it answered.
type fixed struct {
	mu      sync.Mutex
	queries int
}

func (f *fixed) Handshake(context.Context, string) (*wire.HandshakeAck, error) {
	return &wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion, Provider: frame.ProviderInfo{Name: "fixed", Version: "1"}}, nil
}

func (f *fixed) Query(_ context.Context, q *frame.Query) (*wire.Result, error) {
	f.mu.Lock()
	f.queries++
	f.mu.Unlock()
	return &wire.Result{Frames: []frame.Frame{{ID: "f", Kind: frame.KindDoc, Title: q.Goal, Content: "abcd", Score: 0.5, TokenCost: 1, CitationLabel: "f"}}}, nil
}

func (f *fixed) Verify(context.Context, []frame.ID) ([]wire.Verdict, error) { return nil, nil }

// session runs Conn on one end of a Pipe and returns the other end.
func session(t *testing.T, s Server) (transport.Connection, <-chan error) {
	t.Helper()
	host, prov := transport.Pipe()
	done := make(chan error, 1)
	go func() { done <- Conn(context.Background(), s, prov) }()
	t.Cleanup(func() { host.Close() })
	return host, done
}

func exchange(t *testing.T, c transport.Connection, line string) wire.Envelope {
	t.Helper()
	if err := c.Write(context.Background(), []byte(line)); err != nil {
		t.Fatal(err)
	}
	reply, err := c.Read()
	if err != nil {
		t.Fatal(err)
	}
	env, err := wire.Unmarshal(reply)
	if err != nil {
		t.Fatalf("reply %q: %v", reply, err)
	}
	return env
}

// TestConnAnswersAndCarriesOn: a malformed line is answered bad_request
// (R1) and the session goes on; a correlated query's id is echoed; shutdown
// ends Conn with nil.
func TestConnAnswersAndCarriesOn(t *testing.T) {
	c, done := session(t, &fixed{})
	if e, ok := exchange(t, c, `{"type":"handshake","protocol_version":"contextgraph/1.0"}`).(*wire.HandshakeAck); !ok || e.Provider.Name != "fixed" {
		t.Fatalf("handshake: %#v", e)
	}
	if e, ok := exchange(t, c, `not json`).(*wire.Error); !ok || e.Code != wire.CodeBadRequest {
		t.Fatalf("malformed line: %#v", e)
	}
	q := `{"type":"query","id":"q7","query":{"goal":"g","max_tokens":10,"max_frames":2}}`
	if e, ok := exchange(t, c, q).(*wire.Frames); !ok || e.ID != "q7" || len(e.Result.Frames) != 1 {
		t.Fatalf("correlated query: %#v", e)
	}
	if e, ok := exchange(t, c, `{"type":"query","query":{"goal":"g","max_tokens":0,"max_frames":2}}`).(*wire.Error); !ok || e.Code != wire.CodeBadRequest {
		t.Fatalf("zero budget: %#v", e)
	}
	if err := c.Write(context.Background(), []byte(`{"type":"shutdown"}`)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Conn after shutdown: %v", err)
	}
}

// TestConnAnswersUnknownRequests: an envelope of a type the provider does
// not implement is answered bad_request, echoing its id, when it is a
// request (it carries an id), so the host need not wait out its timeout;
// an unknown notification (no id) gets no reply.
func TestConnAnswersUnknownRequests(t *testing.T) {
	c, _ := session(t, &fixed{})
	if err := c.Write(context.Background(), []byte(`{"type":"context/resolve","id":"r1","ref":{}}`)); err != nil {
		t.Fatal(err)
	}
	answered := make(chan []byte, 1)
	go func() {
		line, _ := c.Read()
		answered <- line
	}()
	var line []byte
	select {
	case line = <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("an unknown request got no answer")
	}
	reply, err := wire.Unmarshal(line)
	if err != nil {
		t.Fatalf("reply %q: %v", line, err)
	}
	e, ok := reply.(*wire.Error)
	if !ok || e.Code != wire.CodeBadRequest || e.ID != "r1" || !strings.Contains(e.Message, `"context/resolve"`) {
		t.Fatalf("unknown request: %#v", e)
	}
	// The notification is passed over: the next reply is the query's.
	if err := c.Write(context.Background(), []byte(`{"type":"progress","done":1}`)); err != nil {
		t.Fatal(err)
	}
	if f, ok := exchange(t, c, `{"type":"query","id":"q1","query":{"goal":"g","max_tokens":10,"max_frames":2}}`).(*wire.Frames); !ok || f.ID != "q1" {
		t.Fatalf("after an unknown notification: %#v", f)
	}
}

// TestStdioRefusesOverlongLineAtOnce: a line over the limit is answered
// bad_request naming the limit before the line has ended, and the next line
// is served.
func TestStdioRefusesOverlongLineAtOnce(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Stdio(context.Background(), &fixed{}, inR, outW); outW.Close() }()
	replies := transport.Stream(outR, io.Discard, 0, nil)
	// 17 MiB of one line, not yet terminated.
	go func() { _, _ = inW.Write([]byte(`{"type":"query","pad":"` + strings.Repeat("x", 17<<20))) }()
	line, err := replies.Read()
	var we wire.Error
	if err != nil || json.Unmarshal(line, &we) != nil || we.Code != wire.CodeBadRequest || !strings.Contains(we.Message, "16777216-byte limit") {
		t.Fatalf("over-long line: %q %v", line, err)
	}
	go func() {
		_, _ = inW.Write([]byte("\"}\n" + `{"type":"handshake","protocol_version":"contextgraph/1.0"}` + "\n"))
		inW.Close()
	}()
	if line, err := replies.Read(); err != nil || !strings.Contains(string(line), "handshake_ack") {
		t.Fatalf("after the long line: %q %v", line, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Stdio at end of input: %v", err)
	}
}

// TestConnEndsOnBrokenInput: a read failure other than the end of input
// is returned.
func TestConnEndsOnBrokenInput(t *testing.T) {
	c := transport.Stream(failing{}, io.Discard, 0, nil)
	if err := Conn(context.Background(), &fixed{}, c); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v", err)
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }
