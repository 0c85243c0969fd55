package gosrc

import (
	"errors"
	"go/ast"
	"testing"
)

const sample = `package p

var m = map[string]int{"a": 1, "b\x41": 2, 3: 4}
var n = []struct{ k string }{{k: "field key, not a string literal"}}
var o = map[string][]rune{"nested": {'x', 'y'}}
`

func TestStringKeys(t *testing.T) {
	got := map[string]string{}
	err := StringKeys("sample.go", []byte(sample), func(k string, v ast.Expr) error {
		switch v := v.(type) {
		case *ast.BasicLit:
			got[k] = v.Value
		case *ast.CompositeLit:
			got[k] = "composite"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "1", "bA": "2", "nested": "composite"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestStringKeysStopsAtTheFirstError(t *testing.T) {
	stop := errors.New("stop")
	calls := 0
	err := StringKeys("sample.go", []byte(sample), func(string, ast.Expr) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	if err := StringKeys("bad.go", []byte("package"), func(string, ast.Expr) error { return nil }); err == nil {
		t.Fatal("a file that does not parse gave no error")
	}
}
