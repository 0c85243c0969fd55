package files

import (
	"go/scanner"
	"go/token"
	"strings"
)

// goUnits cuts Go source into its package clause with imports and file
// comment, then one unit per top-level declaration beginning at its doc
// comment; comments between declarations go with the declaration after
// them. Source that does not scan as Go (no package clause, unbalanced
// brackets, bad tokens) is cut as other code.
//
// Only the top level matters here, so the source is tokenised rather than
// parsed: a declaration ends at the first semicolon (written or inserted
// at a newline) outside brackets, which is where go/parser ends it too, at
// a fraction of the cost.
func goUnits(name string, src []byte, lines []lineSpan) []unit {
	decls, pkg, headerEnd, ok := scanGoDecls(name, src)
	if !ok {
		return blockUnits(src, lines, true)
	}
	var units []unit
	prevEnd := 0 // 0-based line index just past the previous unit
	add := func(end int, head string) {
		start := prevEnd
		for start < end && isBlank(lineText(src, lines[start])) {
			start++
		}
		if end > start {
			units = append(units, unit{start: start, end: end, heading: head, cut: blankCuts(src, lines, start, end), alone: true})
		}
		prevEnd = max(prevEnd, end)
	}
	add(min(headerEnd, len(lines)), "package "+pkg)
	for _, d := range decls {
		end := min(d.endLine, len(lines))
		if end <= prevEnd {
			continue
		}
		add(end, d.name)
	}
	if prevEnd < len(lines) {
		add(len(lines), "")
	}
	return units
}

// goDecl is a top-level declaration other than an import: its last line
// (1-based) and its name for the symbol field.
type goDecl struct {
	endLine int
	name    string
}

// declScan is the state of scanGoDecls within one declaration.
type declScan struct {
	kw       token.Token // FUNC, TYPE, VAR, CONST, IMPORT; ILLEGAL between declarations
	names    []string
	recv     string // receiver type of a method
	inRecv   bool
	recvSeen bool // the receiver list (or the name of a function) is behind us
	wantName bool // the next identifier at spec level names a spec
	inNames  bool // just after a name of a spec's list: a comma continues it
	group    bool // a parenthesised group: specs are at depth 1
	afterKw  bool // the keyword was the last token
}

// scanGoDecls lists the top-level declarations of Go source, the package
// name and the last line of the package clause and imports. ok is false
// when the source does not scan as a Go file.
func scanGoDecls(name string, src []byte) (decls []goDecl, pkg string, headerEnd int, ok bool) {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var s scanner.Scanner
	bad := false
	s.Init(file, src, func(token.Position, string) { bad = true }, 0)
	depth := 0
	var d declScan
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF || bad || depth < 0 {
			break
		}
		switch tok {
		case token.LPAREN, token.LBRACE, token.LBRACK:
			if depth == 0 && tok == token.LPAREN {
				if d.kw == token.FUNC && !d.recvSeen {
					d.inRecv = true
				} else if d.afterKw && d.kw != token.FUNC {
					d.group, d.wantName = true, true
				}
			}
			depth++
			d.afterKw = false
			continue
		case token.RPAREN, token.RBRACE, token.RBRACK:
			depth--
			if depth == 0 && d.inRecv {
				d.inRecv, d.recvSeen = false, true
			}
			continue
		}
		specLevel := (depth == 0 && !d.group) || (depth == 1 && d.group)
		switch {
		case depth == 0 && tok == token.PACKAGE && pkg == "":
			if at, t, l := s.Scan(); t == token.IDENT {
				pkg, headerEnd = l, file.Line(at)
			}
		case depth == 0 && d.kw == token.ILLEGAL && (tok == token.FUNC || tok == token.TYPE || tok == token.VAR || tok == token.CONST || tok == token.IMPORT):
			d = declScan{kw: tok, wantName: tok != token.FUNC, afterKw: true}
			continue
		case depth == 0 && tok == token.SEMICOLON && d.kw != token.ILLEGAL:
			if d.kw == token.IMPORT {
				headerEnd = file.Line(pos)
			} else {
				decls = append(decls, goDecl{endLine: file.Line(pos), name: d.symbol()})
			}
			d = declScan{}
		case d.kw == token.FUNC:
			if tok == token.IDENT && d.inRecv && depth == 1 {
				d.recv = lit // the last identifier at the list's level is the type
			} else if tok == token.IDENT && depth == 0 && len(d.names) == 0 {
				d.names, d.recvSeen = append(d.names, lit), true
			}
		case specLevel && d.kw != token.IMPORT:
			d.spec(tok, lit)
		}
		d.afterKw = false
	}
	return decls, pkg, headerEnd, !bad && depth == 0 && pkg != ""
}

// spec follows the names at the start of a type, var or const spec.
func (d *declScan) spec(tok token.Token, lit string) {
	switch {
	case tok == token.SEMICOLON:
		d.wantName, d.inNames = true, false
	case tok == token.IDENT && d.wantName:
		d.names = append(d.names, lit)
		d.wantName, d.inNames = false, d.kw != token.TYPE
	case tok == token.COMMA && d.inNames:
		d.wantName, d.inNames = true, false
	default:
		d.wantName, d.inNames = false, false
	}
}

// symbol names the declaration: "Server.Shutdown" for a method, "Shutdown"
// for a function, the spec names of a const, var or type group (at most
// four).
func (d *declScan) symbol() string {
	if d.kw == token.FUNC {
		if len(d.names) == 0 {
			return ""
		}
		if d.recv != "" {
			return d.recv + "." + d.names[0]
		}
		return d.names[0]
	}
	names := d.names
	if len(names) > 4 {
		names = names[:4]
	}
	return clip(strings.Join(names, ", "))
}
