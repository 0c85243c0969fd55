package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

const frameJSON = `{"id":"a","kind":"doc","title":"t","content":"abcd","score":0.5,"token_cost":1,"citation_label":"c"}`

func framesLine(frameMembers string) string {
	return `{"type":"frames","result":{"frames":[{"id":"a","kind":"doc","title":"t","token_cost":1,"citation_label":"c",` + frameMembers + `}],"truncated":false}}`
}

func TestBadInputIsATypedError(t *testing.T) {
	syntax := func(err error) bool { var e *json.SyntaxError; return errors.As(err, &e) }
	typ := func(err error) bool { var e *json.UnmarshalTypeError; return errors.As(err, &e) }
	miss := func(member string) func(error) bool {
		return func(err error) bool { var e *frame.MissingMemberError; return errors.As(err, &e) && e.Member == member }
	}
	is := func(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }
	cases := []struct {
		name string
		line string
		want func(error) bool
	}{
		{"malformed", `{"type":"handshake",`, syntax},
		{"truncated", `{"type":"handshake","protocol_version":"contextgr`, syntax},
		{"garbage", `this is not valid json {{{`, syntax},
		{"trailing garbage", `{"type":"shutdown"} x`, syntax},
		{"invalid UTF-8", "{\"type\":\"error\",\"message\":\"\xff\xfe\"}", is(errInvalidUTF8)},
		{"NaN", framesLine(`"score":NaN`), syntax},
		{"Infinity", framesLine(`"score":Infinity`), syntax},
		{"f32 overflow", framesLine(`"score":1e39`), typ},
		{"negative u32", `{"type":"query","query":{"goal":"g","max_frames":-1,"max_tokens":1}}`, typ},
		{"u32 overflow", `{"type":"query","query":{"goal":"g","max_frames":1,"max_tokens":4294967296}}`, typ},
		{"fractional u32", `{"type":"query","query":{"goal":"g","max_frames":1.5,"max_tokens":1}}`, typ},
		{"string for bool", `{"type":"frames","result":{"frames":[],"truncated":"no"}}`, typ},
		{"deep nesting", `{"type":"shutdown","x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, syntax},
		{"not an object", `[1,2,3]`, is(errNotObject)},
		{"a number", `42`, is(errNotObject)},
		{"no type", `{"protocol_version":"contextgraph/1.0"}`, miss("type")},
		{"null type", `{"type":null}`, miss("type")},
		{"numeric type", `{"type":7}`, typ},
		{"handshake without version", `{"type":"handshake"}`, miss("protocol_version")},
		{"ack without provider", `{"type":"handshake_ack","protocol_version":"contextgraph/1.0","capabilities":{}}`, miss("provider")},
		{"ack without capabilities", `{"type":"handshake_ack","protocol_version":"contextgraph/1.0","provider":{"name":"n","version":"v","data_flow":{}}}`, miss("capabilities")},
		{"query without query", `{"type":"query","id":"q"}`, miss("query")},
		{"frames without result", `{"type":"frames"}`, miss("result")},
		{"result without frames", `{"type":"frames","result":{"truncated":false}}`, miss("frames")},
		{"result with null frames", `{"type":"frames","result":{"frames":null,"truncated":false}}`, miss("frames")},
		{"result without truncated", `{"type":"frames","result":{"frames":[]}}`, miss("truncated")},
		{"frame without score", framesLine(`"uri":"u"`), miss("score")},
		{"verify without request", `{"type":"verify"}`, miss("request")},
		{"verify without frames", `{"type":"verify","request":{}}`, miss("frames")},
		{"verified without response", `{"type":"verified"}`, miss("response")},
		{"verdict without status", `{"type":"verified","response":{"verdicts":[{"frame":{"provider_id":"p","frame_id":"f"}}]}}`, miss("status")},
		{"error without message", `{"type":"error","code":"internal"}`, miss("message")},
	}
	for _, tc := range cases {
		env, err := Unmarshal([]byte(tc.line))
		var de *DecodeError
		if env != nil || !errors.As(err, &de) || !tc.want(err) {
			t.Errorf("%s: env=%v err=%v (%T)", tc.name, env, err, errors.Unwrap(err))
		}
	}
}

func TestU1UnknownMembersAndNullOptionals(t *testing.T) {
	line := `{"type":"frames","id":null,"future":{"a":[1,{"b":null}]},"result":{"frames":[` +
		`{"id":"a","kind":"doc","title":"t","content":"abcd","score":0.5,"token_cost":1,"citation_label":"c","uri":null,"provenance":null,"extra":true}` +
		`],"truncated":false,"dropped_estimate":null,"frame_attestations":null,"result_attestation":null,"next":1}}`
	env, err := Unmarshal([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Marshal(env)
	want := `{"type":"frames","result":{"frames":[` + frameJSON + `],"truncated":false}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestUnknownEnvelopeTypeIsAValue(t *testing.T) {
	line := []byte(`{"type":"subscribe","topic":"x"}`)
	env, err := Unmarshal(line)
	if err != nil {
		t.Fatal(err)
	}
	u, ok := env.(*Unknown)
	if !ok || u.Type() != "subscribe" || !bytes.Equal(u.Raw, line) {
		t.Fatalf("got %#v", env)
	}
	if out, err := Marshal(u); err != nil || !bytes.Equal(out, line) {
		t.Fatalf("re-encoded %s %v", out, err)
	}
	if v := validate(u); len(v) != 0 {
		t.Fatalf("unknown envelope reported %v", v)
	}
	if _, err := Marshal(&Unknown{Tag: "x", Raw: []byte("{")}); err == nil {
		t.Fatal("invalid raw JSON encoded")
	}
}

// patternReader yields n bytes of a repeated byte, then tail.
type patternReader struct {
	n     int64
	fill  byte
	block []byte
	tail  *strings.Reader
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		k := int64(len(p))
		if k > r.n {
			k = r.n
		}
		if r.block == nil {
			r.block = bytes.Repeat([]byte{r.fill}, 64<<10)
		}
		for i := int64(0); i < k; {
			i += int64(copy(p[i:k], r.block))
		}
		r.n -= k
		return int(k), nil
	}
	return r.tail.Read(p)
}

// A 100 MB line is refused naming the limit, without buffering it, and the
// decoder carries on with the next line.
func TestHundredMegabyteLine(t *testing.T) {
	if testing.Short() {
		t.Skip("covered at 2 MB by TestLineLimitIsExact")
	}
	head := `{"type":"error","message":"`
	r := io.MultiReader(strings.NewReader(head), &patternReader{n: 100 << 20, fill: 'a',
		tail: strings.NewReader("\"}\n{\"type\":\"shutdown\"}\n")})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := NewDecoder(r, nil)
	_, err := d.Decode()
	runtime.ReadMemStats(&after)
	var tl *TooLongError
	var de *DecodeError
	if !errors.As(err, &tl) || tl.Limit != DefaultMaxLineBytes || !errors.As(err, &de) || de.Line != 1 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "16777216-byte limit") {
		t.Fatalf("error does not name the limit: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 40<<20 {
		t.Fatalf("decoder allocated %d MB for an over-long line", grew>>20)
	}
	env, err := d.Decode()
	if err != nil || env.Type() != typeShutdown || d.Line() != 2 {
		t.Fatalf("after the long line: %v %v line %d", env, err, d.Line())
	}
	if _, err := d.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestLineLimitIsExact(t *testing.T) {
	limit := 2 << 20
	mk := func(n int) string { // a shutdown envelope padded to exactly n bytes
		base := `{"type":"shutdown","pad":""}`
		return base[:len(base)-2] + strings.Repeat("x", n-len(base)) + `"}`
	}
	in := mk(limit) + "\n" + mk(limit+1) + "\r\n\n   \n" + mk(40)
	d := NewDecoder(strings.NewReader(in), &DecoderOptions{MaxLineBytes: limit})
	if env, err := d.Decode(); err != nil || env.Type() != typeShutdown {
		t.Fatalf("line at the limit: %v", err)
	}
	_, err := d.Decode()
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Limit != int64(limit) {
		t.Fatalf("line over the limit: %v", err)
	}
	// The last line has no line feed and follows blank lines.
	if env, err := d.Decode(); err != nil || env.Type() != typeShutdown || d.Line() != 5 {
		t.Fatalf("last line: %v %v line %d", env, err, d.Line())
	}
	if _, err := d.Decode(); !errors.Is(err, io.EOF) {
		t.Fatalf("want EOF, got %v", err)
	}
}

func TestDecoderReportsBadLineAndContinues(t *testing.T) {
	in := "{\"type\":\"shutdown\"}\nnot json\n{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0\"}\n"
	d := NewDecoder(strings.NewReader(in), nil)
	var types []string
	var lines []int
	for {
		env, err := d.Decode()
		if errors.Is(err, io.EOF) {
			break
		}
		var de *DecodeError
		if errors.As(err, &de) {
			lines = append(lines, de.Line)
			if !strings.Contains(err.Error(), "line 2") {
				t.Errorf("error does not name its line: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, env.Type())
	}
	if len(types) != 2 || len(lines) != 1 || lines[0] != 2 {
		t.Fatalf("types %v bad lines %v", types, lines)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestDecoderReadError(t *testing.T) {
	d := NewDecoder(failingReader{}, nil)
	_, err := d.Decode()
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || errors.Is(err, io.EOF) {
		t.Fatalf("err = %v", err)
	}
	if _, err2 := d.Decode(); err2 == nil {
		t.Fatal("read error is not sticky")
	}
}

func TestEncoderWritesOneLinePerEnvelope(t *testing.T) {
	var buf bytes.Buffer
	e := newEncoder(&buf)
	envs := []Envelope{&Handshake{ProtocolVersion: ProtocolVersion}, &Frames{Result: Result{}}, &Shutdown{}}
	for _, env := range envs {
		if err := e.Encode(env); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}` + "\n" +
		`{"type":"frames","result":{"frames":[],"truncated":false}}` + "\n" + `{"type":"shutdown"}` + "\n"
	if buf.String() != want {
		t.Fatalf("got %q", buf.String())
	}
	bad := &Frames{Result: Result{Frames: []frame.Frame{{Score: float32(posInf())}}}}
	if err := e.Encode(bad); err == nil || !strings.Contains(err.Error(), "frames[0]") {
		t.Fatalf("non-finite score: %v", err)
	}
	if _, err := Marshal(nil); err == nil {
		t.Fatal("nil envelope encoded")
	}
}

func posInf() float64 { var z float64; return 1 / z }

func TestHTTPBodies(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteBody(&buf, &Error{Code: CodeBadRequest, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != `{"type":"error","code":"bad_request","message":"m"}` {
		t.Fatalf("body %q", buf.String())
	}
	env, err := ReadBody(strings.NewReader(buf.String()+"\n"), 0)
	if err != nil || env.(*Error).Code != CodeBadRequest {
		t.Fatalf("%v %v", env, err)
	}
	_, err = ReadBody(strings.NewReader(`{"type":"shutdown","pad":"xxxxxxxxxx"}`), 16)
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.What != "body" || tl.Limit != 16 {
		t.Fatalf("over-long body: %v", err)
	}
	if _, err := ReadBody(failingReader{}, 0); err == nil {
		t.Fatal("read failure swallowed")
	}
}

// A member of the wrong type or range is reported by its path and protocol
// type, not in encoding/json's Go terms, and the typed cause stays reachable.
func TestDecodeErrorNamesMemberAndProtocolType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"query","query":{"goal":"g","max_frames":-1,"max_tokens":1}}`, "member query.max_frames: number -1 is not a u32"},
		{`{"type":"query","query":{"goal":"g","max_frames":1,"max_tokens":4294967296}}`, "member query.max_tokens: number 4294967296 is not a u32"},
		{`{"type":"query","query":{"goal":5,"max_frames":1,"max_tokens":1}}`, "member query.goal: number is not a string"},
		{`{"type":"frames","result":{"frames":{},"truncated":false}}`, "member result.frames: object is not an array"},
	} {
		_, err := Unmarshal([]byte(tc.in))
		var te *json.UnmarshalTypeError
		if err == nil || !errors.As(err, &te) {
			t.Fatalf("%s: err %v, want a wrapped *json.UnmarshalTypeError", tc.in, err)
		}
		if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "Go struct") {
			t.Errorf("%s:\n got %q\nwant it to contain %q", tc.in, msg, tc.want)
		}
	}
}

// A result's ctxkit:diagnostics member (a vendor member, U3) survives a
// round trip; one that is not an object is not sent, and is no diagnostics
// when received.
func TestResultDiagnosticsVendorMember(t *testing.T) {
	r := Result{Frames: []frame.Frame{}, Diagnostics: json.RawMessage(`{"skipped":{"binary":2}}`)}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"ctxkit:diagnostics":{"skipped":{"binary":2}}`) {
		t.Fatalf("encoded %s", b)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || string(back.Diagnostics) != `{"skipped":{"binary":2}}` {
		t.Fatalf("decoded %q, %v", back.Diagnostics, err)
	}
	if _, err := json.Marshal(Result{Diagnostics: json.RawMessage(`[1]`)}); err == nil {
		t.Error("a diagnostics array was encoded")
	}
	var other Result
	if err := json.Unmarshal([]byte(`{"frames":[],"truncated":false,"ctxkit:diagnostics":"x","acme:note":1}`), &other); err != nil || other.Diagnostics != nil {
		t.Errorf("a non-object diagnostics member was kept: %q, %v", other.Diagnostics, err)
	}
}
