package wire_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// Decode a stdio session line by line and validate each envelope.
func ExampleDecoder() {
	session := `{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}
{"type":"frames","result":{"frames":[{"id":"f","kind":"doc","title":"T","content":"abcdefgh","score":0.5,"token_cost":1,"citation_label":" "}],"truncated":false}}
{"type":"subscribe"}
`
	d := wire.NewDecoder(strings.NewReader(session), nil)
	for {
		env, err := d.Decode()
		if err != nil {
			break // io.EOF at the end
		}
		fmt.Printf("line %d: %s\n", d.Line(), env.Type())
		for _, v := range wire.Validate(env) {
			fmt.Printf("  %v\n", v)
		}
	}
	// Output:
	// line 1: handshake
	// line 2: frames
	//   F3 result.frames[0].citation_label: citation_label is blank
	//   B3 result.frames[0].token_cost: token_cost 1 is not ceil(8 content bytes / 4) = 2
	// line 3: subscribe
}

// Encode envelopes exactly as the reference serializer does.
func ExampleEncoder() {
	e := wire.NewEncoder(os.Stdout)
	_ = e.Encode(&wire.Query{ID: "q1", Query: frame.Query{Goal: "retry <policy>", MaxFrames: 8, MaxTokens: 4096}})
	_ = e.Encode(&wire.Frames{ID: "q1", Result: wire.Result{Frames: []frame.Frame{{
		ID: "f", Kind: frame.KindFact, Title: "T", Content: "abcd", Score: 1, TokenCost: 1, CitationLabel: "c"}}}})
	// Output:
	// {"type":"query","id":"q1","query":{"goal":"retry <policy>","max_frames":8,"max_tokens":4096}}
	// {"type":"frames","id":"q1","result":{"frames":[{"id":"f","kind":"fact","title":"T","content":"abcd","score":1.0,"token_cost":1,"citation_label":"c"}],"truncated":false}}
}

// An unknown or absent error code is acted on as internal; only unavailable
// and shutting_down are worth retrying.
func ExampleCode() {
	for _, c := range []wire.Code{"unavailable", "quota_exhausted", ""} {
		fmt.Printf("%q -> %s retryable=%v\n", c, c.Effective(), c.Retryable())
	}
	// Output:
	// "unavailable" -> unavailable retryable=true
	// "quota_exhausted" -> internal retryable=false
	// "" -> internal retryable=false
}

func ExampleCheckVersion() {
	fmt.Println(wire.CheckVersion(wire.ProtocolVersion, "contextgraph/1.3"))
	fmt.Println(wire.CheckVersion(wire.ProtocolVersion, "contextgraph/2.0"))
	// Output:
	// <nil>
	// handshake: version mismatch: we speak contextgraph/1.0-draft (family contextgraph/1), peer speaks contextgraph/2.0 (family contextgraph/2)
}
