package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ctxkit/ctxkit/wire"
)

// TestStdioLineLimit: a line over the limit ends the session with the
// line reader's typed error, as a frame over the SDK's MaxLineLength does.
func TestStdioLineLimit(t *testing.T) {
	srv, err := NewServer(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}` + "\n")
	done := make(chan error, 1)
	go func() { done <- serveStdio(context.Background(), srv, in, io.Discard, 128) }()
	select {
	case err := <-done:
		var tl *wire.TooLongError
		if !errors.As(err, &tl) || tl.Limit != 128 {
			t.Errorf("a 260-byte line with a 128-byte limit ended the session with %v, want a *wire.TooLongError", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end")
	}
}

// TestHeldResults: a token stands for the bytes held until they are
// taken, once; anything else is written as it is.
func TestHeldResults(t *testing.T) {
	var h heldResults
	a, b := h.hold([]byte(`{"a":1}`)), h.hold([]byte(`{"b":2}`))
	if bytes.Equal(a, b) || !json.Valid(a) {
		t.Fatalf("tokens %s %s: want two distinct JSON values", a, b)
	}
	if got, err := h.take(b); err != nil || string(got) != `{"b":2}` {
		t.Errorf("take(%s) = %s, %v", b, got, err)
	}
	if _, err := h.take(b); err == nil {
		t.Errorf("a token taken twice gave no error")
	}
	for _, other := range []string{`{}`, `{"ctxkit.held":x}`, `{"ctxkit.held":1,"b":2}`, `{"content":[]}`} {
		if got, err := h.take([]byte(other)); err != nil || string(got) != other {
			t.Errorf("take(%s) = %s, %v; want it unchanged", other, got, err)
		}
	}
	if got, err := h.take(a); err != nil || string(got) != `{"a":1}` {
		t.Errorf("take(%s) = %s, %v", a, got, err)
	}
}

// TestHeldResultMarshalledTwice: a result the SDK would marshal twice is
// held once, and its one token stands for it.
func TestHeldResultMarshalledTwice(t *testing.T) {
	var h heldResults
	r := &encodedResult{text: jsonString("a"), structured: json.RawMessage(`{"prompt":"a"}`), held: &h}
	first, _ := r.MarshalJSON()
	second, _ := r.MarshalJSON()
	if !bytes.Equal(first, second) || len(h.m) != 1 {
		t.Fatalf("tokens %s %s, %d held: want one token for one result", first, second, len(h.m))
	}
	if got, err := h.take(first); err != nil || !strings.Contains(string(got), `"structuredContent":{"prompt":"a"}`) {
		t.Errorf("take = %s, %v", got, err)
	}
}

// FuzzStdioEncode: whatever message a line decodes to, the connection
// writes it byte for byte as the SDK's jsonrpc.EncodeMessage does (for an
// answer, given its result compact, as the SDK always hands it over).
func FuzzStdioEncode(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a<b>\n"}]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x<\u2028\"y","result":{ "a" : [1, 2] }}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":-7,"error":{"code":-32601,"message":"no"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1e3,"result":"s"}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"result":{}}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"<x>"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		c := &stdioConn{}
		msgs, err := c.decodeLine(line)
		if err != nil {
			return
		}
		for _, msg := range msgs {
			if resp, ok := msg.(*jsonrpc.Response); ok && len(resp.Result) > 0 {
				var compact bytes.Buffer
				if json.Compact(&compact, resp.Result) != nil {
					continue
				}
				resp.Result = compact.Bytes()
			}
			want, werr := jsonrpc.EncodeMessage(msg)
			got, gerr := c.encode(msg)
			if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("line %s\nencode:        %s, %v\nEncodeMessage: %s, %v", line, got, gerr, want, werr)
			}
		}
	})
}
