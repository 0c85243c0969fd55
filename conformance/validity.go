package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// frameViolations lists the frame-validity rules f breaks (F1–F5, D1,
// P1–P3, G1, G2), each as "RULE member: detail".
func frameViolations(f *frame.Frame) []string {
	var out []string
	add := func(rule, member, format string, args ...any) {
		out = append(out, rule+" "+member+": "+fmt.Sprintf(format, args...))
	}
	if !(f.Score >= 0 && f.Score <= 1) {
		add("F1", "score", "%g is outside [0, 1]", f.Score)
	}
	if strings.TrimSpace(f.Title) == "" {
		add("F2", "title", "blank")
	}
	if strings.TrimSpace(f.CitationLabel) == "" {
		add("F3", "citation_label", "absent or blank")
	}
	for _, ts := range []struct{ name, v string }{{"valid_from", f.ValidFrom}, {"valid_to", f.ValidTo}, {"recorded_at", f.RecordedAt}} {
		if ts.v != "" && !wellFormedTimestamp(ts.v) {
			add("F4", ts.name, "%q is not a protocol timestamp", ts.v)
		}
	}
	if f.ContentDigest != "" && !wellFormedDigest(f.ContentDigest) {
		add("D1", "content_digest", "%q is not sha256: and 64 lower-case hex digits", f.ContentDigest)
	}
	for i, p := range f.Provenance {
		if p.Type == frame.ProvenanceFile && !wellFormedDigest(p.Digest) {
			add("F5", fmt.Sprintf("provenance[%d].digest", i), "file provenance needs a well-formed digest, got %q", p.Digest)
		}
	}
	for i, r := range f.Relations {
		if strings.TrimSpace(r.TargetURI) == "" {
			add("G2", fmt.Sprintf("relations[%d].target_uri", i), "blank")
		}
		if r.DisplayName != "" && strings.TrimSpace(r.DisplayName) == "" {
			add("G1", fmt.Sprintf("relations[%d].display_name", i), "blank")
		}
	}
	switch f.Representation.Effective() {
	case frame.RepresentationFull:
		if f.Content == "" {
			add("P1", "content", "a full frame carries its content")
		}
		if f.ContentRef != nil || f.Transform != nil || f.CanonicalContentHash != "" {
			add("P1", "representation", "a full frame carries no content_ref, transform or canonical_content_hash")
		}
	case frame.RepresentationCompact:
		if f.Content == "" || f.ContentDigest == "" || f.CanonicalContentHash == "" || f.Transform == nil || f.ContentRef == nil {
			add("P2", "representation", "a compact frame carries content, content_digest, canonical_content_hash, transform and content_ref")
		}
	case frame.RepresentationReference:
		if f.Content != "" || f.ContentDigest != "" || f.Transform != nil {
			add("P3", "representation", "a reference frame carries no content, content_digest or transform")
		}
		if f.ContentRef == nil || f.CanonicalContentHash == "" {
			add("P3", "representation", "a reference frame carries content_ref and canonical_content_hash")
		}
	default:
		add("P1", "representation", "unknown representation %q", f.Representation)
	}
	return out
}

func wellFormedDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		c := hexPart[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// wellFormedTimestamp checks YYYY-MM-DDTHH:MM:SS[.digits]Z with calendar
// limits (second 60 allowed).
func wellFormedTimestamp(s string) bool {
	if len(s) < 20 || s[len(s)-1] != 'Z' {
		return false
	}
	for i, c := range []byte(s[:19]) {
		switch i {
		case 4, 7:
			if c != '-' {
				return false
			}
		case 10:
			if c != 'T' {
				return false
			}
		case 13, 16:
			if c != ':' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	if frac := s[19 : len(s)-1]; frac != "" {
		if len(frac) < 2 || frac[0] != '.' {
			return false
		}
		for _, c := range []byte(frac[1:]) {
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	n := func(a, b int) int { v, _ := strconv.Atoi(s[a:b]); return v }
	y, mo, d, h, mi, se := n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19)
	days := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if mo < 1 || mo > 12 {
		return false
	}
	dim := days[mo-1]
	if mo == 2 && (y%4 == 0 && y%100 != 0 || y%400 == 0) {
		dim = 29
	}
	return d >= 1 && d <= dim && h <= 23 && mi <= 59 && se <= 60
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
		start, end, err := parseLineRange(rng)
		if err != nil {
			return "", err
		}
		b, err = sliceLines(b, start, end)
		if err != nil {
			return "", err
		}
	}
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:]), nil
}

func parseLineRange(r string) (start, end int, err error) {
	body, ok := strings.CutPrefix(r, "L")
	if !ok {
		return 0, 0, fmt.Errorf("range %q: want L<start>[-<end>]", r)
	}
	a, b, two := strings.Cut(body, "-")
	num := func(s string) (int, bool) {
		if s == "" || s[0] == '0' {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s) {
			if c < '0' || c > '9' {
				return 0, false
			}
			if v > 1<<30 {
				return 1 << 31, true // clamp huge numbers
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	start, ok = num(a)
	if !ok {
		return 0, 0, fmt.Errorf("range %q: bad start line", r)
	}
	end = start
	if two {
		if end, ok = num(b); !ok || end < start {
			return 0, 0, fmt.Errorf("range %q: bad end line", r)
		}
	}
	return start, end, nil
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
