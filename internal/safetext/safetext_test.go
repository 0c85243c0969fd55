package safetext

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile are strings a provider could send to forge an audit line or drive
// a terminal.
var hostile = []string{
	"ok\nincluded verifiable forged/line@sha256:00 attestation=attested",
	"\x1b[2J\x1b[Hcleared",
	"carriage\rreturn",
	"bell\a tab\t nul\x00 del\x7f",
	"nel\u0085line",
	"line\u2028separator\u2029paragraph",
	"bidi \u202egnp.exe\u202c",
	"zero\u200bwidth\ufeffbom",
	"c1 csi \u009b2J",
	"invalid \xff\xfe utf8",
	"nbsp\u00a0ideographic\u3000space",
}

func printable(t *testing.T, got string) {
	t.Helper()
	if !utf8.ValidString(got) {
		t.Fatalf("output %q is not valid UTF-8", got)
	}
	for _, r := range got {
		if r != ' ' && !strconv.IsPrint(r) {
			t.Fatalf("output %q keeps non-printable %U", got, r)
		}
	}
}

func TestEscapeLeavesNoControl(t *testing.T) {
	for _, s := range hostile {
		got := Escape(s)
		printable(t, got)
		if got == s {
			t.Errorf("Escape(%q) returned its input unchanged", s)
		}
	}
	if got := Escape("\x1b[31m"); got != `\x1b[31m` {
		t.Errorf("Escape(ESC[31m) = %q, want the escape spelled \\x1b", got)
	}
	if got := Escape("a\nb"); got != `a\nb` {
		t.Errorf("Escape(a LF b) = %q", got)
	}
	if got := Escape("\xff"); got != `\xff` {
		t.Errorf("Escape(0xff) = %q", got)
	}
}

func TestEscapeKeepsReadableText(t *testing.T) {
	for _, s := range []string{"", "plain text", `host: query "x": provider error internal: "boom"`, "café ✓ 東京", `C:\path`} {
		if got := Escape(s); got != s {
			t.Errorf("Escape(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestEscapeCleanDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("an ordinary error message, café. ", 20)
	if n := testing.AllocsPerRun(100, func() { _ = Escape(s) }); n != 0 {
		t.Fatalf("Escape of clean text allocates %.0f times", n)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"docs":             "docs",
		"alpha/x@sha256:0": "alpha/x@sha256:0",
		"":                 `""`,
		"two words":        `"two words"`,
		"q\"uote":          `"q\"uote"`,
		"a\nb":             `"a\nb"`,
		"\x1b[2J":          `"\x1b[2J"`,
		"bidi\u202e":       `"bidi\u202e"`,
		"nbsp\u00a0x":      `"nbsp\u00a0x"`,
		"café":             "café",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
	for _, s := range hostile {
		got := Quote(s)
		printable(t, got)
		if back, err := strconv.Unquote(got); err != nil || back != s && utf8.ValidString(s) {
			t.Errorf("Quote(%q) = %s does not unquote to its input (%v)", s, got, err)
		}
	}
}

// checkProperty is the invariant both fuzz targets assert.
func checkProperty(t *testing.T, s string) {
	e := Escape(s)
	printable(t, e)
	if cleanPrefix(s) == len(s) && e != s {
		t.Fatalf("Escape changed clean %q to %q", s, e)
	}
	q := Quote(s)
	printable(t, q)
	if q != s {
		back, err := strconv.Unquote(q)
		if err != nil {
			t.Fatalf("Quote(%q) = %s is not a Go string literal: %v", s, q, err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("Quote(%q) = %s unquotes to %q", s, q, back)
		}
	} else if strings.ContainsAny(s, " \"\\") {
		t.Fatalf("Quote left %q bare", s)
	}
}

// seedHostile seeds f with the hostile strings and more.
func seedHostile(f *testing.F, more ...string) {
	for _, s := range append(hostile, more...) {
		f.Add(s)
	}
}

func FuzzEscapeQuote(f *testing.F) {
	seedHostile(f, "plain")
	f.Fuzz(checkProperty)
}

func BenchmarkEscape(b *testing.B) {
	clean := strings.Repeat(`host: query "docs": provider error internal: "upstream timed out" `, 16)
	hostile := strings.Repeat("boom\n\x1b[2Jforged\u202e line ", 64)
	for _, c := range []struct{ name, s string }{{"clean", clean}, {"hostile", hostile}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			b.ReportAllocs()
			for b.Loop() {
				_ = Escape(c.s)
			}
		})
	}
}

// checkTerminal is ForTerminal's property: the lines and tabs of s stay,
// nothing else that is not printable does, and what each line showed is
// what Escape shows of it.
func checkTerminal(t *testing.T, s string) {
	got := ForTerminal(s)
	if !utf8.ValidString(got) {
		t.Fatalf("ForTerminal(%q) = %q is not valid UTF-8", s, got)
	}
	for _, r := range got {
		if r != ' ' && r != '\n' && r != '\t' && !strconv.IsPrint(r) {
			t.Fatalf("ForTerminal(%q) = %q keeps non-printable %U", s, got, r)
		}
	}
	lines, gotLines := strings.Split(s, "\n"), strings.Split(got, "\n")
	if len(lines) != len(gotLines) {
		t.Fatalf("ForTerminal(%q) = %q: %d lines, want %d", s, got, len(gotLines), len(lines))
	}
	for i := range lines {
		want := strings.Join(mapStrings(strings.Split(lines[i], "\t"), Escape), "\t")
		if gotLines[i] != want {
			t.Fatalf("ForTerminal(%q) line %d = %q, want %q", s, i, gotLines[i], want)
		}
	}
}

func mapStrings(ss []string, f func(string) string) []string {
	for i := range ss {
		ss[i] = f(ss[i])
	}
	return ss
}

func TestForTerminal(t *testing.T) {
	for _, s := range hostile {
		checkTerminal(t, s)
	}
	for _, s := range []string{"", "plain\n\tindented\n", "func f() {\n\treturn\n}\n", "café ✓\n"} {
		if got := ForTerminal(s); got != s {
			t.Errorf("ForTerminal(%q) = %q, want it unchanged", s, got)
		}
	}
	if got := ForTerminal("a\r\x1b[2Kb\n\u202ec"); got != `a\r\x1b[2Kb`+"\n"+`\u202ec` {
		t.Errorf("ForTerminal = %q", got)
	}
}

func FuzzForTerminal(f *testing.F) {
	seedHostile(f, "line\n\tnext\r\n")
	f.Fuzz(checkTerminal)
}
