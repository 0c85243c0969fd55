package mcpserver

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// shapeOf walks a decoded JSON value: its longest array, the length of the
// outermost array, its values and its depth.
func shapeOf(v any, depth int) (longest, values, deepest int) {
	values, deepest = 1, depth
	var elems []any
	switch v := v.(type) {
	case []any:
		longest = len(v)
		elems = v
	case map[string]any:
		for _, e := range v {
			elems = append(elems, e)
		}
	default:
		return 0, 1, depth
	}
	for _, e := range elems {
		l, n, d := shapeOf(e, depth+1)
		longest, values, deepest = max(longest, l), values+n, max(deepest, d)
	}
	return longest, values, deepest
}

// checkAgainstDecoder checks checkShape's verdict on valid JSON text
// against the decoded value: an array longer than the bound is always
// refused, one within it never for its length, and the value count it
// bounds is never less than the true count.
func checkAgainstDecoder(t *testing.T, text []byte, lim shapeLimits) {
	t.Helper()
	var v any
	if err := json.Unmarshal(text, &v); err != nil {
		return
	}
	longest, values, depth := shapeOf(v, 1)
	err := checkShape(text, lim)
	switch {
	case depth > maxShapeDepth:
		if err == nil {
			t.Fatalf("%.80q: depth %d accepted", text, depth)
		}
	case lim.array > 0 && longest > lim.array:
		if err == nil {
			t.Fatalf("%.80q: an array of %d accepted under %d", text, longest, lim.array)
		}
	case lim.values > 0 && values > lim.values:
		if err == nil {
			t.Fatalf("%.80q: %d values accepted under %d", text, values, lim.values)
		}
	case err != nil && !strings.Contains(err.Error(), "values") && !strings.Contains(err.Error(), "batch"):
		t.Fatalf("%.80q (longest array %d, %d values, depth %d): refused: %v", text, longest, values, depth, err)
	}
	if arr, ok := v.([]any); ok && lim.top > 0 && len(arr) > lim.top && err == nil {
		t.Fatalf("%.80q: a batch of %d accepted under %d", text, len(arr), lim.top)
	}
}

// randomJSON builds a random JSON value with strings that hold brackets,
// commas, quotes and backslashes.
func randomJSON(r *rand.Rand, depth int) any {
	if depth > 5 || r.IntN(3) == 0 {
		switch r.IntN(4) {
		case 0:
			return r.Float64()
		case 1:
			return []string{`a,b`, `[`, `}`, `"`, `\`, `\"]`, ``}[r.IntN(7)]
		case 2:
			return nil
		}
		return true
	}
	n := r.IntN(6)
	if r.IntN(2) == 0 {
		a := make([]any, n)
		for i := range a {
			a[i] = randomJSON(r, depth+1)
		}
		return a
	}
	m := map[string]any{}
	for i := range n {
		m[string(rune('a'+i))+`,"[`] = randomJSON(r, depth+1)
	}
	return m
}

func TestCheckShapeMatchesTheDecoder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		text, _ := json.Marshal(randomJSON(r, 0))
		checkAgainstDecoder(t, text, shapeLimits{array: 1 + r.IntN(5), values: 1 + r.IntN(60)})
		checkAgainstDecoder(t, text, shapeLimits{top: 1 + r.IntN(5)})
	}
	deep := strings.Repeat("[", maxShapeDepth+1) + strings.Repeat("]", maxShapeDepth+1)
	if checkShape([]byte(deep), shapeLimits{}) == nil {
		t.Fatal("nesting past the bound accepted")
	}
}

func FuzzCheckShape(f *testing.F) {
	for _, s := range []string{`{"parts":[{},{},{}]}`, `[1,[2,3],{"a,":"]"}]`, `"\\\"[,]"`, `[[[[]]]]`} {
		f.Add([]byte(s), uint8(2), uint8(5), uint8(1))
	}
	f.Fuzz(func(t *testing.T, text []byte, array, values, top uint8) {
		checkAgainstDecoder(t, text, shapeLimits{array: int(array), values: int(values), top: int(top)})
	})
}
