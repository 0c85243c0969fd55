package frame

import (
	"errors"
	"strconv"
	"strings"
)

// DigestAlgorithms lists the digest algorithms contextgraph/1 defines.
var digestAlgorithms = [...]string{"sha256"}

// WellFormedDigest reports whether s is "sha256:" followed by exactly 64
// lowercase hexadecimal digits (rules D1 and F5).
func WellFormedDigest(s string) bool { return digestProblem(s) == "" }

func digestProblem(s string) string {
	alg, hex, ok := strings.Cut(s, ":")
	if !ok {
		return "not of the form algorithm:hex"
	}
	known := false
	for _, a := range digestAlgorithms {
		known = known || alg == a
	}
	if !known {
		return "algorithm " + strconv.Quote(alg) + " is not sha256"
	}
	if len(hex) != 64 {
		return "hex part has " + strconv.Itoa(len(hex)) + " characters, want 64"
	}
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "hex part holds " + strconv.QuoteRune(rune(c)) + "; only lowercase hex is allowed"
		}
	}
	return ""
}

// LineRange is a parsed "L<start>[-<end>]" range: 1-based inclusive line
// numbers, End equal to Start for a single line. Numbers too large for an int
// saturate (a reader clamps the end to the end of the file anyway).
type LineRange struct {
	// Start and End are the first and last lines, 1-based and inclusive.
	Start, End int
}

// ParseLineRange parses the line-range grammar of file provenance:
// "L" line ["-" line], line = [1-9][0-9]*, uppercase L only, end ≥ start.
func ParseLineRange(s string) (LineRange, error) {
	rest, ok := strings.CutPrefix(s, "L")
	if !ok {
		return LineRange{}, errors.New("must start with L")
	}
	a, b, hasEnd := strings.Cut(rest, "-")
	start, err := lineNumber(a)
	if err != nil {
		return LineRange{}, err
	}
	end := start
	if hasEnd {
		if end, err = lineNumber(b); err != nil {
			return LineRange{}, err
		}
		if end < start {
			return LineRange{}, errors.New("end line is before start line")
		}
	}
	return LineRange{Start: start, End: end}, nil
}

func lineNumber(s string) (int, error) {
	if s == "" || s[0] < '1' || s[0] > '9' {
		return 0, errors.New("line number must be a decimal from 1 without leading zeros")
	}
	const maxInt = int(^uint(0) >> 1)
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, errors.New("line number must be decimal digits")
		}
		d := int(c - '0')
		if v > (maxInt-d)/10 {
			v = maxInt
		} else {
			v = v*10 + d
		}
	}
	return v, nil
}

// Fingerprint is a parsed embeddings fingerprint "<model-id>/<dims>[/<norm>]".
type Fingerprint struct {
	// Model is the model id, the part before the first '/'; never empty.
	Model string
	// Dims is the vector dimension count, positive.
	Dims int
	// Norm is the optional normalisation (for example "l2"); empty when
	// the fingerprint has no third part.
	Norm string
}

// ParseFingerprint parses the embeddings fingerprint grammar (rule E1): a
// non-empty model id, a positive decimal dimension count, and an optional
// non-empty normalisation, separated by '/'.
func ParseFingerprint(s string) (Fingerprint, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return Fingerprint{}, errors.New("not of the form model/dims[/norm]")
	}
	if parts[0] == "" {
		return Fingerprint{}, errors.New("model id is empty")
	}
	dims, err := strconv.Atoi(parts[1])
	if err != nil || dims <= 0 || parts[1][0] == '+' || parts[1][0] == '0' {
		return Fingerprint{}, errors.New("dims " + strconv.Quote(parts[1]) + " is not a positive decimal")
	}
	fp := Fingerprint{Model: parts[0], Dims: dims}
	if len(parts) == 3 {
		if parts[2] == "" {
			return Fingerprint{}, errors.New("normalisation is empty")
		}
		fp.Norm = parts[2]
	}
	return fp, nil
}
