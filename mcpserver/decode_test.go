package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// plainLines are requests as MCP clients send them: decodeRequest takes
// each of them.
var plainLines = []string{
	`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"query_context","arguments":{"budget":2000,"goal":"how is the \"budget\" split\n","max_frames":16}}}`,
	`{"method":"ping","id":"a-1","jsonrpc":"2.0"}`,
	` { "jsonrpc" : "2.0" , "id" : -12 , "method" : "tools/list" , "params" : [ 1 , {} ] } `,
	`{"jsonrpc":"2.0","id":null,"method":"x","params":{}}`,
	`{"jsonrpc":"2.0","id":123456789012345,"method":"","params":{"a":"\u00e9"}}`,
}

// otherLines are valid JSON that decodeRequest leaves to the SDK's decoder.
var otherLines = []string{
	`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"p\u0069ng"}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1234567890123456,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"\u0031","method":"ping"}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","extra":1}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{}`,
	`[]`,
	`"ping"`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`,
}

// TestDecodeRequestTakesPlainLines: the lines clients send take the
// cheap path and decode as the SDK decodes them; the others are left to
// the SDK.
func TestDecodeRequestTakesPlainLines(t *testing.T) {
	for _, line := range plainLines {
		got, ok := decodeRequest([]byte(line))
		if !ok {
			t.Errorf("%s: left to the SDK, want it decoded", line)
			continue
		}
		sameAsSDK(t, []byte(line), got)
	}
	for _, line := range otherLines {
		if !json.Valid([]byte(line)) {
			t.Fatalf("%s is not JSON", line)
		}
		if got, ok := decodeRequest([]byte(line)); ok {
			t.Errorf("%s: decoded as %+v, want it left to the SDK", line, got)
		}
	}
}

// sameAsSDK fails unless got is what jsonrpc.DecodeMessage makes of line.
func sameAsSDK(t *testing.T, line []byte, got *jsonrpc.Request) {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		t.Fatalf("%s: decoded as %+v, but the SDK refuses it: %v", line, got, err)
	}
	if !reflect.DeepEqual(msg, got) {
		t.Fatalf("%s: decoded as %#v, the SDK decodes %#v", line, got, msg)
	}
}

// FuzzDecodeRequest holds decodeRequest to jsonrpc.DecodeMessage on every
// valid JSON line it takes; on any other input it must not panic (the
// session only hands it valid JSON, but it reads outside input). The
// seeds under testdata/fuzz/FuzzDecodeRequest are lines of every kind a
// client may send.
func FuzzDecodeRequest(f *testing.F) {
	for _, line := range append(append([]string{}, plainLines...), otherLines...) {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := decodeRequest(line)
		if !json.Valid(line) {
			return
		}
		if ok {
			sameAsSDK(t, line, got)
		}
	})
}

// BenchmarkDecodeRequest compares decodeRequest with the SDK's decoder on
// the tools/call line the SDK's client sends.
func BenchmarkDecodeRequest(b *testing.B) {
	line := []byte(plainLines[2])
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := decodeRequest(line); !ok {
				b.Fatal("not plain")
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}
