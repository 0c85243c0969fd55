package mcpserver

import (
	"bytes"
	"strings"
	"testing"
)

// spliced is what splice writes for p, in one piece.
func spliced(t *testing.T, h *heldResults, p []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := h.splice(p, func(b []byte) error { out.Write(b); return nil }); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The writer puts each held answer where its token stands, once, and
// writes anything that only looks like a token as it is.
func TestHeldSplice(t *testing.T) {
	hr := newHeldRequests()
	_, h, closeHeld := hr.open()
	defer closeHeld()
	a := h.hold([]byte(`{"a":1}`))
	b := h.hold([]byte(`{"b":2}`))
	c := h.hold([]byte(`{"c":3}`))
	prefix := string(hr.prefix)
	event := "event: message\ndata: [" + `{"id":1,"result":` + string(a) + `},{"id":2,"result":` + string(b) + "}]\n\n"
	if got, want := spliced(t, h, []byte(event)), "event: message\ndata: [{\"id\":1,\"result\":{\"a\":1}},{\"id\":2,\"result\":{\"b\":2}}]\n\n"; got != want {
		t.Errorf("spliced\n%q, want\n%q", got, want)
	}
	for _, other := range []string{
		string(a),           // already written: nothing held under it
		prefix + `x}`,       // no number
		prefix,              // cut short
		prefix + `99}`,      // never held
		`{"ctxkit.held":1}`, // the stdio prefix, without this handler's nonce
		strings.Replace(string(c), "held.", "held", 1), // another nonce
	} {
		if got := spliced(t, h, []byte("x"+other+"y")); got != "x"+other+"y" {
			t.Errorf("%q was rewritten to %q", other, got)
		}
	}
	if got := spliced(t, h, c); got != `{"c":3}` {
		t.Errorf("a held answer still waiting after look-alikes: %q", got)
	}
}

// Two handlers' tokens differ, and one request's held answers are not
// another's.
func TestHeldRequestsAreSeparate(t *testing.T) {
	one, two := newHeldRequests(), newHeldRequests()
	if bytes.Equal(one.prefix, two.prefix) {
		t.Fatal("two handlers share a token prefix")
	}
	k1, h1, close1 := one.open()
	k2, h2, close2 := one.open()
	if k1 == k2 || h1 == h2 {
		t.Fatal("two requests share held results")
	}
	tok := h1.hold([]byte(`{"r":1}`))
	if got := spliced(t, h2, tok); got != string(tok) {
		t.Errorf("request 2 wrote request 1's answer: %q", got)
	}
	close1()
	close2()
	if one.lookup(k1) != nil || one.lookup(k2) != nil || one.lookup("") != nil {
		t.Error("closed requests are still found")
	}
}

// FuzzHeldSplice: whatever the bytes around them, splice writes held
// answers where their tokens stand and every other byte unchanged.
func FuzzHeldSplice(f *testing.F) {
	f.Add([]byte("data: "), []byte(`{"a":1}`), []byte("\n\n"), uint8(1))
	f.Add([]byte(`{"ctxkit.held.`), []byte(`x`), []byte(`}`), uint8(2))
	f.Add([]byte{}, []byte{}, []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, before, answer, after []byte, copies uint8) {
		hr := newHeldRequests()
		_, h, closeHeld := hr.open()
		defer closeHeld()
		if bytes.Contains(before, hr.prefix) || bytes.Contains(after, hr.prefix) {
			t.Skip("the random nonce cannot be guessed")
		}
		var p, want []byte
		for range int(copies % 4) {
			tok := h.hold(answer)
			p = append(append(append(p, before...), tok...), after...)
			want = append(append(append(want, before...), answer...), after...)
		}
		if got := spliced(t, h, p); got != string(want) {
			t.Fatalf("spliced %q, want %q", got, want)
		}
	})
}
