package files

import (
	"bytes"
	"testing"
)

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
