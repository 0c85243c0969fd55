package files

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// goUnits cuts Go source into its package clause with imports and file
// comment, then one unit per top-level declaration beginning at its doc
// comment; comments between declarations go with the declaration after
// them. Source that does not parse is cut as other code.
func goUnits(name string, src []byte, lines []lineSpan) []unit {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil || f == nil {
		return blockUnits(src, lines, true)
	}
	line := func(p token.Pos) int { return fset.Position(p).Line } // 1-based
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
	headerEnd := line(f.Name.End())
	for _, imp := range f.Imports {
		headerEnd = max(headerEnd, line(imp.End()))
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			headerEnd = max(headerEnd, line(g.End()))
		}
	}
	add(min(headerEnd, len(lines)), "package "+f.Name.Name)
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		end := min(line(d.End()), len(lines))
		if end <= prevEnd {
			continue
		}
		add(end, declName(d))
	}
	if prevEnd < len(lines) {
		add(len(lines), "")
	}
	return units
}

// declName names a declaration for the symbol field: "Server.Shutdown" for
// a method, "Shutdown" for a function, the spec names for const, var and
// type groups (at most four).
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			return recvName(d.Recv.List[0].Type) + "." + d.Name.Name
		}
		return d.Name.Name
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		if len(names) > 4 {
			names = names[:4]
		}
		return clip(strings.Join(names, ", "))
	}
	return ""
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
