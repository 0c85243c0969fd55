package files

import (
	"bytes"
	"testing"
)

func TestStem(t *testing.T) {
	cases := []struct{ in, want string }{
		// Porter's own examples (step 1a, 1b, 2, 4).
		{"ponies", "poni"}, {"cats", "cat"},
		{"agreed", "agre"}, {"plastered", "plaster"}, {"motoring", "motor"},
		{"conflated", "conflat"}, {"hopping", "hop"}, {"relational", "relat"},
		// ctxkit's undoubling: a verb and its -ing form meet.
		{"sniffing", "snif"}, {"sniff", "snif"}, {"caresses", "cares"}, {"caress", "cares"},
		// Verbs in -ic that take a k before -ing and -ed meet their base form;
		// words that end in -ck of their own keep it.
		{"panic", "panic"}, {"panics", "panic"}, {"panicking", "panic"}, {"panicked", "panic"},
		{"trafficking", "traffic"}, {"picnicked", "picnic"},
		{"locking", "lock"}, {"clicked", "click"}, {"checking", "check"}, {"stack", "stack"},
		// Identifiers and short words are left alone.
		{"http2", "http2"}, {"io", "io"}, {"getwd", "getwd"},
	}
	for _, c := range cases {
		if got := string(stem([]byte(c.in))); got != c.want {
			t.Errorf("stem(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzStem: the stemmer never panics, leaves anything but lower-case ASCII
// words as they are, and never lengthens a word by more than the one 'e'
// Porter may restore.
func FuzzStem(f *testing.F) {
	for _, s := range []string{"panicking", "caresses", "generalizations", "a", "", "ed", "ing", "ying", "sses", "Zebra", "naïve"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := []byte(s)
		out := stem(bytes.Clone(in))
		if len(out) > len(in)+1 {
			t.Fatalf("stem(%q) = %q: longer than the word and an 'e'", s, out)
		}
		for _, c := range in {
			if c < 'a' || c > 'z' {
				if !bytes.Equal(out, in) {
					t.Fatalf("stem(%q) = %q: a word with other bytes changed", s, out)
				}
				break
			}
		}
	})
}
