package mcpserver

import "fmt"

// maxShapeDepth is the deepest nesting a tool's arguments may have; the
// tools' schemas nest a few levels, a frame's members a few more.
const maxShapeDepth = 64

// toolShape is the bound on a tool's arguments under the API's limit of
// maxFrames offers per request: no array longer, and 32 values an offer.
func toolShape(maxFrames int) shapeLimits {
	return shapeLimits{array: maxFrames, values: 32 * maxFrames}
}

// shapeLimits bounds the shape of a JSON text; zero bounds nothing.
type shapeLimits struct {
	top    int // elements of the outermost array (a JSON-RPC batch)
	array  int // elements of any array
	values int // values in all
}

// checkShape refuses a JSON text whose arrays are longer, or whose values
// more, than lim allows, or that nests deeper than maxShapeDepth, without
// decoding it. A tool's arguments are checked against its schema as a
// generic value, which costs hundreds of bytes a value: four mebibytes of
// "[{},{},...]" would cost gigabytes across a few calls. The text is
// assumed to be JSON (the SDK parsed it first, or will refuse it); for
// anything else the counts are of brackets and commas outside strings.
func checkShape(b []byte, lim shapeLimits) error {
	var (
		open   [maxShapeDepth]int // commas so far in each open array; -1 for an object
		depth  int
		values = 1
	)
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i+1)
		case '[', '{':
			if depth == maxShapeDepth {
				return fmt.Errorf("nested deeper than %d levels", maxShapeDepth)
			}
			values++
			open[depth] = -1
			if b[i] == '[' {
				open[depth] = 0
			}
			depth++
		case ']', '}':
			depth = max(depth-1, 0)
		case ',':
			values++
			if depth == 0 || open[depth-1] < 0 {
				break
			}
			open[depth-1]++
			if n := open[depth-1] + 1; lim.array > 0 && n > lim.array {
				return fmt.Errorf("an array of more than %d elements", lim.array)
			} else if depth == 1 && lim.top > 0 && n > lim.top {
				return fmt.Errorf("a batch of more than %d messages", lim.top)
			}
		}
		if lim.values > 0 && values > lim.values {
			return fmt.Errorf("more than %d values", lim.values)
		}
	}
	return nil
}

// stringEnd returns the index of the quote that ends the string whose
// first byte is at i (len(b) when it does not end).
func stringEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}
