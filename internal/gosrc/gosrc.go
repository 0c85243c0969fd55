// Package gosrc reads tables out of Go source for ctxkit's code generators,
// which take their input from Go files: the standard library's HTML entity
// table (internal/fence/genentity) and a tokenizer's generated vocabulary
// (tokens/internal/rankgen).
package gosrc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// StringKeys parses the Go file path (its text is src when src is not nil,
// as for parser.ParseFile) and calls fn with every key-value element of its
// composite literals whose key is a string literal: the unquoted key and
// the value's expression, which is not searched further. The first error,
// the parser's or fn's, stops the walk and is returned.
func StringKeys(path string, src []byte, fn func(key string, value ast.Expr) error) error {
	var text any
	if src != nil {
		text = src
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, text, 0)
	if err != nil {
		return fmt.Errorf("gosrc: %w", err)
	}
	var bad error
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok || bad != nil {
			return bad == nil
		}
		key, ok := kv.Key.(*ast.BasicLit)
		if !ok || key.Kind != token.STRING {
			return true
		}
		name, err := strconv.Unquote(key.Value)
		if err != nil {
			bad = fmt.Errorf("gosrc: %s: key %s: %w", path, key.Value, err)
			return false
		}
		bad = fn(name, kv.Value)
		return false
	})
	return bad
}
