package files

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// parsedDecls is what go/parser says scanGoDecls should find: each
// top-level declaration's last line and name, and the last line of the
// package clause and imports.
func parsedDecls(src []byte) (decls []goDecl, headerEnd int, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, false
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	headerEnd = line(f.Name.End())
	for _, d := range f.Decls {
		if g, isGen := d.(*ast.GenDecl); isGen && g.Tok == token.IMPORT {
			headerEnd = max(headerEnd, line(g.End()))
			continue
		}
		decls = append(decls, goDecl{endLine: line(d.End()), name: parsedName(d)})
	}
	return decls, headerEnd, true
}

func parsedName(d ast.Decl) string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			t := recvType(d.Recv.List[0].Type)
			if id, isID := t.(*ast.Ident); isID {
				return id.Name + "." + d.Name.Name
			}
		}
		return d.Name.Name
	case *ast.GenDecl:
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
	}
	return clip(strings.Join(names[:min(4, len(names))], ", "))
}

// recvType strips a receiver's pointer, type arguments and parentheses.
func recvType(t ast.Expr) ast.Expr {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		default:
			return t
		}
	}
}

// FuzzGoDecls: for any source go/parser accepts, the top-level scan finds
// the same declarations, ending on the same lines, with the same names.
func FuzzGoDecls(f *testing.F) {
	for _, s := range []string{
		"package p\n\nimport \"fmt\"\n\n// F prints.\nfunc F() { fmt.Println(1) }\n",
		"package p\nimport (\n\t\"a\"\n\tb \"b\"\n)\nvar x, y int = 1, 2\nvar sysStat func(fi int) error\n",
		"package p\n\ntype (\n\tA struct{ X int }\n\tB[T any] interface{ M(T) }\n)\n\nfunc (s *B[T]) M(v T) {}\n",
		"package p\nconst (\n\t_ Format = iota\n\tFormatX\n\tc, d = 1, 2\n)\nfunc g[T any, U comparable](a T) (r U) { return }\n",
		"package p\n\nfunc asm(x int) int\n\nvar m = map[string]func(){\n\t\"a\": func() {},\n}\ntype X = Y\nfunc (X) N() struct{ a int } { return struct{ a int }{} }\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		want, wantHeader, ok := parsedDecls([]byte(src))
		if !ok {
			return
		}
		got, _, header, scanned := scanGoDecls("x.go", []byte(src))
		if !scanned {
			t.Fatalf("go/parser accepts what the scan refuses:\n%s", src)
		}
		if header != wantHeader || !slices.Equal(got, want) {
			t.Fatalf("scan %d %v, parser %d %v, of:\n%s", header, got, wantHeader, want, src)
		}
	})
}
