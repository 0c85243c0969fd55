package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
)

// frameViolations lists the frame-validity rules f breaks, each as
// "RULE field: detail": every rule frame.Validate checks except B3 and P4,
// which budget-honesty judges.
func frameViolations(f *frame.Frame) []string {
	var out []string
	for _, v := range f.Validate() {
		if v.Rule == rule.B3 || v.Rule == rule.P4 {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s: %s", v.Rule, v.Field, v.Detail))
	}
	return out
}

// fileRangeDigest re-reads the bytes a file provenance link addresses and
// returns "sha256:<hex>". Only local file:// URIs are read; rng is
// "L<a>[-<b>]" (1-indexed, inclusive, end clamped) or "" for the whole file.
func fileRangeDigest(uri, rng string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
		return "", fmt.Errorf("not a local file uri: %q", uri)
	}
	b, err := os.ReadFile(u.Path)
	if err != nil {
		return "", err
	}
	if rng != "" {
		lr, err := frame.ParseLineRange(rng)
		if err != nil {
			return "", fmt.Errorf("range %q: %w", rng, err)
		}
		b, err = sliceLines(b, lr.Start, lr.End)
		if err != nil {
			return "", err
		}
	}
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:]), nil
}

// sliceLines returns lines start..end (1-indexed, inclusive, LF kept, end
// clamped to the last line).
func sliceLines(b []byte, start, end int) ([]byte, error) {
	var offsets []int // start offset of each line
	for i := 0; i < len(b); {
		offsets = append(offsets, i)
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if start > len(offsets) {
		return nil, fmt.Errorf("range starts at line %d of %d", start, len(offsets))
	}
	if end > len(offsets) {
		end = len(offsets)
	}
	stop := len(b)
	if end < len(offsets) {
		stop = offsets[end]
	}
	return b[offsets[start-1]:stop], nil
}
