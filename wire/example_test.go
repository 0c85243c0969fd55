package wire_test

import (
	"fmt"
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
	var c wire.Checker
	for {
		env, err := d.Decode()
		if err != nil {
			break // io.EOF at the end
		}
		fmt.Printf("line %d: %s\n", d.Line(), env.Type())
		for _, v := range c.Check(env) {
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
func ExampleMarshal() {
	for _, env := range []wire.Envelope{
		&wire.Query{ID: "q1", Query: frame.Query{Goal: "retry <policy>", MaxFrames: 8, MaxTokens: 4096}},
		&wire.Frames{ID: "q1", Result: wire.Result{Frames: []frame.Frame{{
			ID: "f", Kind: frame.KindFact, Title: "T", Content: "abcd", Score: 1, TokenCost: 1, CitationLabel: "c"}}}},
	} {
		b, _ := wire.Marshal(env)
		fmt.Println(string(b))
	}
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

func ExampleCompatible() {
	fmt.Println(wire.Compatible(wire.ProtocolVersion, "contextgraph/1.3"))
	fmt.Println(wire.Compatible(wire.ProtocolVersion, "contextgraph/2.0"))
	// Output:
	// true
	// false
}

// Read the composer's input format: one {"provider", "frame"} offer per line.
func ExampleReadOffers() {
	in := `{"provider":"alpha","frame":{"id":"a","kind":"doc","title":"A","content":"abcd","score":0.9,"token_cost":1,"citation_label":"a"}}
{"provider":"beta","frame":{"id":"b","kind":"fact","title":"B","content":"abcdefgh","score":0.4,"token_cost":2,"citation_label":"b"}}
`
	offers, lines, err := wire.ReadOffers(strings.NewReader(in), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, o := range offers {
		fmt.Printf("line %d: %v (%d violations)\n", lines[i], o.ID(), len(o.Frame.Validate()))
	}
	// Output:
	// line 1: alpha/a (0 violations)
	// line 2: beta/b (0 violations)
}

// CheckInput is what `ctxkit validate` runs: any CGP input, every violation
// with its line.
func ExampleCheckInput() {
	in := `{"provider":"alpha","frame":{"id":"a","kind":"doc","title":"A","content":"abcd","score":1.2,"token_cost":1,"citation_label":"a"}}
{"type":"handshake","protocol_version":"contextgraph/2.0"}
`
	rep, err := wire.CheckInput(strings.NewReader(in), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range rep.Violations {
		fmt.Println(f)
	}
	fmt.Println("valid:", rep.Valid())
	// Output:
	// line 1: F1 frame.score: score 1.2 is outside [0,1]
	// line 2: H1 protocol_version: version "contextgraph/2.0" is not in family contextgraph/1
	// valid: false
}

// Unmarshal and Marshal one envelope; a type this revision does not define
// is a value, not an error.
func ExampleUnmarshal() {
	for _, line := range []string{
		`{"type": "error", "code": "unavailable", "message": "index rebuilding", "extra": true}`,
		`{"type":"subscribe","topic":"docs"}`,
	} {
		env, err := wire.Unmarshal([]byte(line))
		if err != nil {
			fmt.Println(err)
			continue
		}
		switch e := env.(type) {
		case *wire.Error:
			out, _ := wire.Marshal(e)
			fmt.Printf("%s retryable=%v\n", out, e.Code.Retryable())
		case *wire.Unknown:
			fmt.Println("unknown envelope type", e.Type())
		}
	}
	// Output:
	// {"type":"error","code":"unavailable","message":"index rebuilding"} retryable=true
	// unknown envelope type subscribe
}

// A Checker applies the rules that span envelopes of one session.
func ExampleChecker() {
	var c wire.Checker
	for _, line := range []string{
		`{"type":"query","id":"q1","query":{"goal":"g","kinds":["doc"],"max_frames":1,"max_tokens":10}}`,
		`{"type":"frames","id":"q1","result":{"frames":[{"id":"f","kind":"fact","title":"T","content":"abcd","score":0.5,"token_cost":1,"citation_label":"c"}],"truncated":false}}`,
	} {
		env, _ := wire.Unmarshal([]byte(line))
		for _, v := range c.Check(env) {
			fmt.Println(v)
		}
	}
	// Output:
	// Q1 result.frames[0].kind: kind "fact" was not requested
}
