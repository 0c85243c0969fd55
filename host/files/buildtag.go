package files

import (
	"bytes"
	"go/build/constraint"
	"strings"
)

// builtOnRequest reports whether a Go file's //go:build line keeps it out
// of every default build: it holds only when a GOEXPERIMENT tag or the
// "ignore" tag is set. Platform tags count as set (some platform builds
// the file), so a file for one OS is not off by default. Only the lines
// before the package clause are read, as the go command reads them; a
// line that does not parse counts as no constraint.
func builtOnRequest(src []byte) bool {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		text := strings.TrimSpace(string(line))
		switch {
		case strings.HasPrefix(text, "package "):
			return false
		case constraint.IsGoBuild(text):
			expr, err := constraint.Parse(text)
			return err == nil && !expr.Eval(defaultTag)
		}
	}
	return false
}

// defaultTag says whether a default build may set tag: any but a
// GOEXPERIMENT's and "ignore".
func defaultTag(tag string) bool {
	return !strings.HasPrefix(tag, "goexperiment.") && tag != "ignore"
}

// deprecated reports whether a Go chunk holds a top-level doc comment
// paragraph that starts "Deprecated:", the convention go doc and gopls
// honour. A struct field's notice (indented) does not count: the type is
// not deprecated.
func deprecated(text string) bool {
	return strings.HasPrefix(text, "// Deprecated:") || strings.Contains(text, "\n// Deprecated:")
}

// isCommand reports whether a Go file is in package main: its
// declarations cannot be imported, so like unexported ones they are no
// public interface (the package's doc comment, a command's manual, is).
// The first line that starts with "package " is taken as the clause.
func isCommand(src []byte) bool {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		if rest, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("package ")); ok {
			name, _, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
			return string(name) == "main"
		}
	}
	return false
}
