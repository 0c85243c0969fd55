package files

import (
	"bytes"
	"fmt"
	"testing"
)

func TestBuiltOnRequest(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"//go:build goexperiment.jsonv2\n\npackage json\n", true},
		{"// Copyright\n\n//go:build goexperiment.jsonv2 && !goexperiment.x\n\npackage json\n", true},
		{"//go:build ignore\n\npackage main\n", true},
		{"//go:build !goexperiment.jsonv2\n\npackage json\n", false}, // the default build's
		{"//go:build linux && amd64\n\npackage unix\n", false},       // some platform builds it
		{"//go:build windows || goexperiment.x\npackage p\n", false},
		{"package p\n\n//go:build ignore\n", false}, // after the package clause: not a constraint
		{"// +build ignore\n\npackage p\n", false},  // the old form alone: go vet's business
		{"//go:build (\npackage p\n", false},        // does not parse
		{"", false},
	} {
		if got := builtOnRequest([]byte(c.src)); got != c.want {
			t.Errorf("%q: %v, want %v", c.src, got, c.want)
		}
	}
}

// A file the go command builds by default outranks one it builds only on
// request, other things equal (the two heads have the same length, and
// the path that sorts first is the one off by default).
func TestOffByDefaultRanksLower(t *testing.T) {
	ix := NewIndex()
	body := "\n\n// Package p parses durations.\npackage p\n\n// ParseDuration parses a duration string such as 1h30m.\nfunc ParseDuration(s string) {}\n"
	ix.Add(Document{Path: "a/v2/parse.go", Content: []byte("//go:build goexperiment.v2" + body)})
	ix.Add(Document{Path: "b/parse.go", Content: []byte("// a comment of the length" + body)})
	hits := ix.Search("parse a duration such as 1h30m", 0)
	if len(hits) < 2 || hits[0].Path != "b/parse.go" || hits[1].Score >= hits[0].Score*0.7 {
		t.Fatalf("hits %+v: want b/parse.go first, a/v2 at the prior's share", hits)
	}
}

// A deprecated declaration ranks below its replacement, other things
// equal (the deprecated one's path sorts first).
func TestDeprecatedRanksLower(t *testing.T) {
	ix := NewIndex()
	doc := "package p\n\n// ReadAll reads from r until an error or EOF.\n//\n// %s\nfunc ReadAll(r io.Reader) ([]byte, error)\n"
	ix.Add(Document{Path: "a/ioutil.go", Content: []byte(fmt.Sprintf(doc, "Deprecated: see the io package."))})
	ix.Add(Document{Path: "b/io.go", Content: []byte(fmt.Sprintf(doc, "Note well: see the io package."))})
	hits := ix.Search("read everything from a reader until eof", 0)
	if len(hits) < 2 || hits[0].Path != "b/io.go" {
		t.Fatalf("hits %+v: want b/io.go first", hits)
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"// Deprecated: use X.\nfunc F()", true},
		{"// F does.\n//\n// Deprecated: use X.\nfunc F()", true},
		{"type T struct {\n\t// Deprecated: use Y.\n\tX int\n}", false},
		{"// F is not Deprecated: at all.\nfunc F()", false},
	} {
		if got := deprecated(c.text); got != c.want {
			t.Errorf("deprecated(%q) = %v", c.text, got)
		}
	}
}

// A command's declarations rank below a library's, other things equal
// (the command's path sorts first), and its package doc does not.
func TestCommandDeclarationsRankLower(t *testing.T) {
	ix := NewIndex()
	decl := "\n\n// Sequencer orders the results of concurrent jobs.\nfunc Sequencer() {}\n"
	ix.Add(Document{Path: "a/cmd.go", Content: []byte("package main" + decl)})
	ix.Add(Document{Path: "b/lib.go", Content: []byte("package libx" + decl)})
	hits := ix.Search("order the results of concurrent jobs", 0)
	if len(hits) < 2 || hits[0].Path != "b/lib.go" {
		t.Fatalf("hits %+v: want b/lib.go first", hits)
	}
}

func TestIsCommand(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{"// Gofmt formats Go programs.\npackage main\n", true},
		{"//go:build ignore\n\npackage main // import \"x\"\n", true},
		{"package mainly\n", false},
		{"// Package p.\npackage p\n\nfunc main() {}\n", false},
		{"", false},
	} {
		if got := isCommand([]byte(c.src)); got != c.want {
			t.Errorf("%q: %v, want %v", c.src, got, c.want)
		}
	}
}

func FuzzBuiltOnRequest(f *testing.F) {
	f.Add([]byte("//go:build goexperiment.jsonv2\n\npackage json\n"))
	f.Add([]byte("//go:build !(ignore || linux)\npackage p"))
	f.Fuzz(func(t *testing.T, src []byte) {
		off := builtOnRequest(src)
		if off && !bytes.Contains(src, []byte("//go:build")) {
			t.Fatalf("%q: off by default without a //go:build line", src)
		}
	})
}
