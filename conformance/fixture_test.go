package conformance

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/wire"
)

func TestSliceLines(t *testing.T) {
	b := []byte("one\ntwo\r\nthree\nfour")
	for _, tc := range []struct {
		start, end int
		want       string
		err        bool
	}{
		{1, 1, "one\n", false},
		{2, 3, "two\r\nthree\n", false},
		{3, 99, "three\nfour", false},
		{4, 4, "four", false},
		{5, 5, "", true},
	} {
		got, err := sliceLines(b, tc.start, tc.end)
		if (err != nil) != tc.err || string(got) != tc.want {
			t.Errorf("L%d-%d: %q, %v; want %q", tc.start, tc.end, got, err, tc.want)
		}
	}
	if got, err := sliceLines([]byte("a\nb\n"), 2, 9); err != nil || string(got) != "b\n" {
		t.Errorf("trailing newline: %q %v", got, err)
	}
	if _, err := sliceLines([]byte("a\n"), 2, 2); err == nil {
		t.Error("a trailing newline started an empty line")
	}
}

func TestFileRangeDigest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a b.txt")
	if err := os.WriteFile(path, []byte("abc\ndef\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "file://" + strings.ReplaceAll(path, " ", "%20")
	got, err := fileRangeDigest(uri, "L2")
	if err != nil || got != digestOf("def\n") {
		t.Fatalf("L2: %s %v", got, err)
	}
	if got, _ := fileRangeDigest(uri, ""); got != digestOf("abc\ndef\n") {
		t.Fatalf("whole file: %s", got)
	}
	for _, bad := range []struct{ uri, rng string }{
		{"https://example.com/x", ""},
		{"file://remote.host" + path, ""},
		{uri, "L0"},
		{uri, "lines 1-2"},
		{"file://" + filepath.Join(dir, "missing"), ""},
	} {
		if _, err := fileRangeDigest(bad.uri, bad.rng); err == nil {
			t.Errorf("%s %s: no error", bad.uri, bad.rng)
		}
	}
}

func TestFixtureScenarioProviderServesItsFrames(t *testing.T) {
	p, err := NewFixtureProvider(&FixtureOptions{Scenario: scenarioQuarantine, Provider: providerFlooder})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	in := `{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}` + "\n" +
		`{"type":"query","query":{"goal":"g","max_frames":8,"max_tokens":1000}}` + "\n" +
		`{"type":"shutdown"}` + "\n" + `{"type":"query","query":{"goal":"after shutdown","max_frames":1,"max_tokens":1}}` + "\n"
	var out bytes.Buffer
	if err := p.ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	dec := wire.NewDecoder(&out, nil)
	env, err := dec.Decode()
	if ack, ok := env.(*wire.HandshakeAck); err != nil || !ok || ack.Provider.Name != "ctxkit-fixture-flooder" {
		t.Fatalf("ack: %v %v", env, err)
	}
	env, err = dec.Decode()
	fr, ok := env.(*wire.Frames)
	if err != nil || !ok || len(fr.Result.Frames) != 17 {
		t.Fatalf("frames: %v %v", env, err)
	}
	if _, err := dec.Decode(); err == nil {
		t.Fatal("the provider answered after shutdown")
	}
}

func TestFixtureRejectsUnknownNames(t *testing.T) {
	for _, o := range []FixtureOptions{{Misbehave: "nope"}, {Scenario: "nope", Provider: "p0"}, {Scenario: scenarioQuarantine, Provider: "nobody"}} {
		if _, err := NewFixtureProvider(&o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestFixtureCrashModes(t *testing.T) {
	for mode, line := range map[string]string{
		"crash-on-query":          `{"type":"query","query":{"goal":"g","max_frames":8,"max_tokens":10}}`,
		"crash-on-garbage":        `{{{`,
		"die-on-unknown-envelope": `{"type":"mystery"}`,
		"dirty-shutdown":          `{"type":"shutdown"}`,
	} {
		p, err := NewFixtureProvider(&FixtureOptions{Misbehave: mode})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = p.ServeStdio(context.Background(), strings.NewReader(line+"\n"), &out)
		p.Close()
		if !errors.Is(err, ErrFixtureCrash) || out.Len() != 0 {
			t.Errorf("%s: err %v, output %q", mode, err, out.String())
		}
	}
}

// FuzzFixtureRespond: whatever line arrives, the honest fixture provider
// answers with at most one well-formed envelope and never panics.
func FuzzFixtureRespond(f *testing.F) {
	f.Add(`{"type":"handshake","protocol_version":"contextgraph/1.0-draft"}`)
	f.Add(`{"type":"query","id":"x","query":{"goal":"g","kinds":["doc"],"anchors":["symbol:///docs/configuration.md#overview"],"max_frames":1,"max_tokens":4096,"as_of":"2026-07-01T00:00:00Z"}}`)
	f.Add(`{"type":"query","query":{"goal":"g","embedding":[0.5],"max_frames":8,"max_tokens":10}}`)
	f.Add(`{"type":"verify","request":{"frames":[{"provider_id":"p","frame_id":"frm_configuration","content_digest":"sha256:00"}]}}`)
	f.Add(`{"type":"mystery","x":1}`)
	f.Add(`not json {{{`)
	f.Add(`{"type":null}`)
	p, err := NewFixtureProvider(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { p.Close() })
	f.Fuzz(func(t *testing.T, line string) {
		reply, act := p.respond([]byte(line))
		if act == actCrash {
			t.Fatal("the honest provider crashed")
		}
		if reply == nil {
			return
		}
		if bytes.ContainsRune(reply, '\n') {
			t.Fatalf("reply holds a newline: %q", reply)
		}
		if _, err := wire.Unmarshal(reply); err != nil {
			t.Fatalf("reply %q does not decode: %v", reply, err)
		}
	})
}
