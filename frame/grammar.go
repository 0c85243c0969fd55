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

// CheckTimestamp returns nil when s follows the protocol timestamp grammar
// (rule F4): YYYY-MM-DDTHH:MM:SS, then Z or a '.' with one or more digits and
// Z; uppercase T and Z; UTC only; a real calendar date (leap years included);
// hour ≤ 23, minute ≤ 59, second ≤ 60 (a leap second is accepted). Because
// there is exactly one spelling per instant, such timestamps compare
// chronologically as strings.
func CheckTimestamp(s string) error {
	if len(s) < 20 {
		return errors.New("too short for YYYY-MM-DDTHH:MM:SSZ")
	}
	digitsAt := func(i, n int) (int, bool) {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := digitsAt(0, 4)
	month, ok2 := digitsAt(5, 2)
	day, ok3 := digitsAt(8, 2)
	hour, ok4 := digitsAt(11, 2)
	minute, ok5 := digitsAt(14, 2)
	second, ok6 := digitsAt(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return errors.New("not of the form YYYY-MM-DDTHH:MM:SS")
	}
	rest := s[19:]
	if rest != "Z" {
		frac, ok := strings.CutPrefix(rest, ".")
		if !ok || len(frac) < 2 || frac[len(frac)-1] != 'Z' {
			return errors.New("must end in Z or .digits then Z (UTC only, no offset)")
		}
		for i := 0; i < len(frac)-1; i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return errors.New("fractional seconds must be digits")
			}
		}
	}
	switch {
	case month < 1 || month > 12:
		return errors.New("month " + strconv.Itoa(month) + " is not 1-12")
	case day < 1 || day > daysIn(year, month):
		return errors.New("day " + strconv.Itoa(day) + " does not exist in " + s[:7])
	case hour > 23:
		return errors.New("hour " + strconv.Itoa(hour) + " is over 23")
	case minute > 59:
		return errors.New("minute " + strconv.Itoa(minute) + " is over 59")
	case second > 60:
		return errors.New("second " + strconv.Itoa(second) + " is over 60")
	}
	return nil
}

// WellFormedTimestamp reports whether CheckTimestamp accepts s.
func WellFormedTimestamp(s string) bool { return CheckTimestamp(s) == nil }

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
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
