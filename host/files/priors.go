package files

import (
	"bytes"
	"go/build/constraint"
	"strings"
)

// goHeader reads a Go file's header as the go command does: the
// //go:build line before the package clause (nil when there is none),
// and the package name. Only the lines up to the package clause are read.
func goHeader(src []byte) (build []byte, pkg string) {
	for len(src) > 0 {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		line = bytes.TrimSpace(line)
		if rest, ok := bytes.CutPrefix(line, []byte("package ")); ok {
			name, _, _ := bytes.Cut(bytes.TrimSpace(rest), []byte(" "))
			return build, string(name)
		}
		if build == nil && constraint.IsGoBuild(string(line)) {
			build = line
		}
	}
	return build, ""
}

// goFileFacts reads what the priors need from a Go file's header, once:
// whether its //go:build line keeps it out of every default build (it
// holds only when a GOEXPERIMENT tag or the "ignore" tag is set; platform
// tags count as set, since some platform builds the file; a line that does
// not parse counts as none), and whether it is in package main, whose
// declarations cannot be imported and so, like unexported ones, are no
// public interface (the package's doc comment, a command's manual, is).
func goFileFacts(src []byte) (offByDefault, command bool) {
	build, pkg := goHeader(src)
	if build != nil {
		expr, err := constraint.Parse(string(build))
		offByDefault = err == nil && !expr.Eval(defaultTag)
	}
	return offByDefault, pkg == "main"
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
