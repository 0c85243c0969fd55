package files

import (
	"bytes"
	"fmt"
	"testing"
)

// Each prior ranks the chunk it weighs below the same chunk without it:
// the two documents differ only in what the prior reads (their heads have
// the same length), and the weighed one's path sorts first, so it would
// win the tie without the prior.
func TestPriorsRankLower(t *testing.T) {
	duration := "\n\n// Package p parses durations.\npackage p\n\n// ParseDuration parses a duration string such as 1h30m.\nfunc ParseDuration(s string) {}\n"
	readAll := "package p\n\n// ReadAll reads from r until an error or EOF.\n//\n// %s\nfunc ReadAll(r io.Reader) ([]byte, error)\n"
	sequencer := "\n\n// Sequencer orders the results of concurrent jobs.\nfunc Sequencer() {}\n"
	for _, c := range []struct {
		prior, query  string
		lower, higher Document
	}{
		{"off by default", "parse a duration such as 1h30m",
			Document{Path: "a/v2/parse.go", Content: []byte("//go:build goexperiment.v2" + duration)},
			Document{Path: "b/parse.go", Content: []byte("// a comment of the length" + duration)}},
		{"deprecated", "read everything from a reader until eof",
			Document{Path: "a/ioutil.go", Content: []byte(fmt.Sprintf(readAll, "Deprecated: see the io package."))},
			Document{Path: "b/io.go", Content: []byte(fmt.Sprintf(readAll, "Note well: see the io package."))}},
		{"command", "order the results of concurrent jobs",
			Document{Path: "a/cmd.go", Content: []byte("package main" + sequencer)},
			Document{Path: "b/lib.go", Content: []byte("package libx" + sequencer)}},
	} {
		ix := NewIndex()
		ix.Add(c.lower)
		ix.Add(c.higher)
		if hits := ix.Search(c.query, 0); len(hits) < 2 || hits[0].Path != c.higher.Path || hits[1].Score >= hits[0].Score*0.7 {
			t.Errorf("%s: hits %+v, want %s first and the other at the prior's share", c.prior, hits, c.higher.Path)
		}
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

// The header rules the priors rely on: which //go:build lines keep a
// file out of every default build, and which files are commands.
func TestGoHeaderRules(t *testing.T) {
	for _, c := range []struct {
		src              string
		onRequest, isCmd bool
	}{
		{"//go:build goexperiment.jsonv2\n\npackage json\n", true, false},
		{"// Copyright\n\n//go:build goexperiment.jsonv2 && !goexperiment.x\n\npackage json\n", true, false},
		{"//go:build ignore\n\npackage main\n", true, true},
		{"//go:build !goexperiment.jsonv2\n\npackage json\n", false, false}, // the default build's
		{"//go:build linux && amd64\n\npackage unix\n", false, false},       // some platform builds it
		{"//go:build windows || goexperiment.x\npackage p\n", false, false},
		{"package p\n\n//go:build ignore\n", false, false}, // after the package clause: not a constraint
		{"// +build ignore\n\npackage p\n", false, false},  // the old form alone: go vet's business
		{"//go:build (\npackage p\n", false, false},        // does not parse
		{"// Gofmt formats Go programs.\npackage main\n", false, true},
		{"package main // import \"x\"\n", false, true},
		{"package mainly\n", false, false},
		{"// Package p.\npackage p\n\nfunc main() {}\n", false, false},
		{"", false, false},
	} {
		off, cmd := goFileFacts([]byte(c.src))
		if off != c.onRequest {
			t.Errorf("goFileFacts(%q): off by default %v", c.src, off)
		}
		if cmd != c.isCmd {
			t.Errorf("goFileFacts(%q): command %v", c.src, cmd)
		}
	}
}

func FuzzGoFileFacts(f *testing.F) {
	f.Add([]byte("//go:build goexperiment.jsonv2\n\npackage json\n"))
	f.Add([]byte("//go:build !(ignore || linux)\npackage p"))
	f.Fuzz(func(t *testing.T, src []byte) {
		off, _ := goFileFacts(src)
		if off && !bytes.Contains(src, []byte("//go:build")) {
			t.Fatalf("%q: off by default without a //go:build line", src)
		}
	})
}
