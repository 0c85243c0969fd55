package doctest

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
)

// validate checks v (decoded JSON) against an OpenAPI 3.1 schema object,
// supporting the keywords docs/openapi.yaml uses: $ref to
// #/components/schemas, allOf, type, required, properties, items, enum,
// minimum, maximum, maxItems, minLength and pattern. Members a schema does
// not list are allowed (the API ignores unknown members).
func validate(spec map[string]any, schema map[string]any, v any, path string) error {
	if ref, ok := schema["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/components/schemas/")
		target := m(m(m(spec["components"])["schemas"])[name])
		if !found || target == nil {
			return fmt.Errorf("%s: unresolvable $ref %q", path, ref)
		}
		return validate(spec, target, v, path)
	}
	if all, ok := schema["allOf"].([]any); ok {
		for _, s := range all {
			if err := validate(spec, m(s), v, path); err != nil {
				return err
			}
		}
	}
	if typ, ok := schema["type"].(string); ok {
		if err := checkType(typ, v, path); err != nil {
			return err
		}
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v is not one of %v", path, v, enum)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range asList(schema["required"]) {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s: required member %q missing", path, r)
			}
		}
		for name, ps := range m(schema["properties"]) {
			if pv, ok := x[name]; ok {
				if err := validate(spec, m(ps), pv, path+"."+name); err != nil {
					return err
				}
			}
		}
	case []any:
		if mx, ok := num(schema["maxItems"]); ok && float64(len(x)) > mx {
			return fmt.Errorf("%s: %d items, at most %v", path, len(x), mx)
		}
		if items := m(schema["items"]); items != nil {
			for i, it := range x {
				if err := validate(spec, items, it, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case float64:
		if mn, ok := num(schema["minimum"]); ok && x < mn {
			return fmt.Errorf("%s: %v < minimum %v", path, x, mn)
		}
		if mx, ok := num(schema["maximum"]); ok && x > mx {
			return fmt.Errorf("%s: %v > maximum %v", path, x, mx)
		}
	case string:
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			return fmt.Errorf("%s: %q does not match %s", path, x, p)
		}
		if mn, ok := num(schema["minLength"]); ok && float64(len([]rune(x))) < mn {
			return fmt.Errorf("%s: shorter than %v", path, mn)
		}
	}
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

func num(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func checkType(typ string, v any, path string) error {
	ok := false
	switch typ {
	case "object":
		_, ok = v.(map[string]any)
	case "array":
		_, ok = v.([]any)
	case "string":
		_, ok = v.(string)
	case "boolean":
		_, ok = v.(bool)
	case "number":
		_, ok = v.(float64)
	case "integer":
		f, isNum := v.(float64)
		ok = isNum && f == math.Trunc(f)
	default:
		return fmt.Errorf("%s: schema type %q not supported by this checker", path, typ)
	}
	if !ok {
		return fmt.Errorf("%s: want %s, got %T", path, typ, v)
	}
	return nil
}

func TestValidateSchemaChecker(t *testing.T) {
	spec := map[string]any{"components": map[string]any{"schemas": map[string]any{
		"T": map[string]any{"type": "object", "required": []any{"a"}, "properties": map[string]any{
			"a": map[string]any{"type": "integer", "minimum": 0},
			"b": map[string]any{"type": "array", "maxItems": 2, "items": map[string]any{"type": "string", "enum": []any{"x", "y"}}},
			"c": map[string]any{"type": "string", "pattern": "^[0-9a-f]{4}$"},
		}},
	}}}
	ref := map[string]any{"$ref": "#/components/schemas/T"}
	for _, tc := range []struct {
		v  any
		ok bool
	}{
		{map[string]any{"a": 1.0, "b": []any{"x"}, "c": "00ff", "extra": true}, true},
		{map[string]any{"b": []any{}}, false},
		{map[string]any{"a": 1.5}, false},
		{map[string]any{"a": -1.0}, false},
		{map[string]any{"a": 1.0, "b": []any{"x", "y", "x"}}, false},
		{map[string]any{"a": 1.0, "b": []any{"z"}}, false},
		{map[string]any{"a": 1.0, "c": "00fg"}, false},
		{"not an object", false},
	} {
		if err := validate(spec, ref, tc.v, "$"); (err == nil) != tc.ok {
			t.Errorf("validate(%v) = %v, want ok=%v", tc.v, err, tc.ok)
		}
	}
}
