package rule_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ruleID is the shape of a protocol anchor: a letter (or UR) and a number.
var ruleID = regexp.MustCompile(`^(UR|[A-Z])[0-9]{1,2}$`)

// constants returns the Rule constants declared in rule.go with their values
// and doc comments.
func constants(t *testing.T) map[string]*ast.ValueSpec {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "rule.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.ValueSpec{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Rule" {
				t.Errorf("constant %s is not of type Rule", vs.Names[0].Name)
			}
			if vs.Doc == nil && g.Doc != nil && len(g.Specs) == 1 {
				vs.Doc = g.Doc
			}
			out[vs.Names[0].Name] = vs
		}
	}
	if len(out) == 0 {
		t.Fatal("no Rule constants found in rule.go")
	}
	return out
}

// TestEveryRuleIsInTheDigest: each constant is named after its anchor,
// carries its one-line meaning, and is a row of the anchor table of
// docs/protocol.md §2.7, so the code cites nothing the digest lacks.
func TestEveryRuleIsInTheDigest(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| ((?:UR|[A-Z])[0-9]{1,2}) \|`).FindAllSubmatch(doc, -1) {
		anchors[string(m[1])] = true
	}
	for name, vs := range constants(t) {
		value, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
		if err != nil {
			t.Fatal(err)
		}
		if name == "Schema" {
			if value != "schema" {
				t.Errorf("Schema = %q, want \"schema\"", value)
			}
			continue
		}
		if value != name || !ruleID.MatchString(value) {
			t.Errorf("constant %s = %q: a rule constant is named after its anchor", name, value)
		}
		if !anchors[value] {
			t.Errorf("%s is not an anchor of docs/protocol.md §2.7", value)
		}
		if vs.Doc == nil || !strings.HasPrefix(vs.Doc.Text(), value+": ") {
			t.Errorf("%s has no doc comment giving its meaning (\"%s: ...\")", name, value)
		}
	}
}

// TestNoRuleLiterals: outside this package and tests, no string literal is
// a rule anchor or starts with one as a message code ("B3", "B3: ...",
// "H2 provider ..."); code names rules by constant. Prose that cites a rule
// in passing (help text, "(F4)" in a message) is text, like a comment.
func TestNoRuleLiterals(t *testing.T) {
	code := regexp.MustCompile(`^(UR|[HCQEFDPBGVXRAU])[0-9]{1,2}([: ]|$)`)
	n := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "rule" || (strings.HasPrefix(name, ".") && name != "..") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		n++
		ast.Inspect(f, func(x ast.Node) bool {
			lit, ok := x.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && code.MatchString(s) {
				t.Errorf("%s: string literal %q names a rule; use the rule constant", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("walked only %d Go files; is the module root at ..?", n)
	}
}
