package frame

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/rule"
)

// Timestamp is a parsed protocol timestamp (rule F4): an instant in UTC to
// any number of fractional digits, a leap second included. The zero value
// is 1970-01-01T00:00:00Z. Compare timestamps with Compare, never as
// strings: "…T00:00:00.5Z" sorts before "…T00:00:00Z" as a string, and
// "…T00:00:00.0Z" is the same instant as "…T00:00:00Z" under another
// spelling.
type Timestamp struct {
	// sec is the Unix time of the whole second, a leap second counted as
	// the second before it (23:59:59).
	sec int64
	// leap is set for a second field of 60, which follows every instant
	// of the second before it.
	leap bool
	// frac holds the fractional digits without trailing zeros, so equal
	// instants have equal fields and digit strings compare as fractions.
	frac string
}

// ParseTimestamp parses the protocol timestamp grammar (rule F4):
// YYYY-MM-DDTHH:MM:SS, then Z or a '.' with one or more digits and Z;
// uppercase T and Z; UTC only (no offset); a real calendar date, leap years
// included; hour ≤ 23, minute ≤ 59, second ≤ 60 (a leap second is
// accepted). The error says which part is wrong. It is the one parser every
// package uses, for frame timestamps, query pins and expiries alike.
func ParseTimestamp(s string) (Timestamp, error) {
	if len(s) < 20 {
		return Timestamp{}, errors.New("too short for YYYY-MM-DDTHH:MM:SSZ")
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
		return Timestamp{}, errors.New("not of the form YYYY-MM-DDTHH:MM:SS")
	}
	frac := ""
	if rest := s[19:]; rest != "Z" {
		f, ok := strings.CutPrefix(rest, ".")
		if !ok || len(f) < 2 || f[len(f)-1] != 'Z' {
			return Timestamp{}, errors.New("must end in Z or .digits then Z (UTC only, no offset)")
		}
		frac = f[:len(f)-1]
		for i := 0; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return Timestamp{}, errors.New("fractional seconds must be digits")
			}
		}
	}
	switch {
	case month < 1 || month > 12:
		return Timestamp{}, errors.New("month " + strconv.Itoa(month) + " is not 1-12")
	case day < 1 || day > daysIn(year, month):
		return Timestamp{}, errors.New("day " + strconv.Itoa(day) + " does not exist in " + s[:7])
	case hour > 23:
		return Timestamp{}, errors.New("hour " + strconv.Itoa(hour) + " is over 23")
	case minute > 59:
		return Timestamp{}, errors.New("minute " + strconv.Itoa(minute) + " is over 59")
	case second > 60:
		return Timestamp{}, errors.New("second " + strconv.Itoa(second) + " is over 60")
	}
	leap := second == 60
	if leap {
		second = 59
	}
	sec := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC).Unix()
	return Timestamp{sec: sec, leap: leap, frac: strings.TrimRight(frac, "0")}, nil
}

// checkTimestamp returns nil when s follows the protocol timestamp grammar
// (rule F4; see ParseTimestamp), else what is wrong.
func checkTimestamp(s string) error {
	_, err := ParseTimestamp(s)
	return err
}

// WellFormedTimestamp reports whether s is a timestamp rule F4 accepts.
func WellFormedTimestamp(s string) bool { return checkTimestamp(s) == nil }

// TimestampOf returns the protocol timestamp of the Go time t, to the
// nanosecond.
func TimestampOf(t time.Time) Timestamp {
	ns := strconv.Itoa(t.Nanosecond() + 1e9)[1:] // nine digits, leading zeros kept
	return Timestamp{sec: t.Unix(), frac: strings.TrimRight(ns, "0")}
}

// Compare returns -1, 0 or +1 as t is before, the same instant as, or
// after u. Every fractional digit counts; a leap second follows the second
// before it and precedes the next minute.
func (t Timestamp) Compare(u Timestamp) int {
	switch {
	case t.sec != u.sec:
		return cmpBool(t.sec < u.sec)
	case t.leap != u.leap:
		return cmpBool(u.leap)
	}
	return strings.Compare(t.frac, u.frac)
}

// cmpBool returns -1 when less holds, else +1.
func cmpBool(less bool) int {
	if less {
		return -1
	}
	return 1
}

// Time returns t as a Go time in UTC, truncated to the nanosecond. Go
// times have no leap seconds, so a leap second becomes the last nanosecond
// of the second before it: it still sorts after that second's other
// instants and before the next minute.
func (t Timestamp) Time() time.Time {
	if t.leap {
		return time.Unix(t.sec, 999_999_999).UTC()
	}
	ns := 0
	for i := 0; i < 9; i++ {
		d := 0
		if i < len(t.frac) {
			d = int(t.frac[i] - '0')
		}
		ns = ns*10 + d
	}
	return time.Unix(t.sec, int64(ns)).UTC()
}

// CompareTimestamps parses a and b (rule F4) and compares them as instants
// (see Timestamp.Compare). The error names the first that does not parse.
func CompareTimestamps(a, b string) (int, error) {
	ta, err := ParseTimestamp(a)
	if err != nil {
		return 0, &timestampError{Value: a, Err: err}
	}
	tb, err := ParseTimestamp(b)
	if err != nil {
		return 0, &timestampError{Value: b, Err: err}
	}
	return ta.Compare(tb), nil
}

// timestampError reports a value that is not a protocol timestamp (rule F4).
type timestampError struct {
	// Value is the offending string.
	Value string
	// Err says which part of the grammar it breaks.
	Err error
}

// Error renders "F4: timestamp "VALUE": reason".
func (e *timestampError) Error() string {
	return string(rule.F4) + ": timestamp " + strconv.Quote(e.Value) + ": " + e.Err.Error()
}

// Unwrap returns the grammar error.
func (e *timestampError) Unwrap() error { return e.Err }

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
