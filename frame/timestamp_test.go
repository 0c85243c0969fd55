package frame

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestTimestampCompareIsChronological: timestamps order as instants, not as
// strings — fractional seconds, trailing zeros and leap seconds included.
func TestTimestampCompareIsChronological(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2026-07-01T00:00:00Z", "2026-07-01T00:00:00.5Z", -1}, // as strings ".5Z" < "Z"
		{"2026-07-01T00:00:00.0Z", "2026-07-01T00:00:00Z", 0},
		{"2026-07-01T00:00:00.500Z", "2026-07-01T00:00:00.5Z", 0},
		{"2026-07-01T00:00:00.49Z", "2026-07-01T00:00:00.5Z", -1},
		{"2026-07-01T00:00:00.1234567891Z", "2026-07-01T00:00:00.1234567892Z", -1}, // past nanoseconds
		{"2016-12-31T23:59:59.999Z", "2016-12-31T23:59:60Z", -1},
		{"2016-12-31T23:59:60Z", "2016-12-31T23:59:60.5Z", -1},
		{"2016-12-31T23:59:60.999Z", "2017-01-01T00:00:00Z", -1},
		{"1969-12-31T23:59:59.5Z", "1970-01-01T00:00:00Z", -1},
		{"2027-01-01T00:00:00Z", "2026-12-31T23:59:59.9Z", 1},
	} {
		got, err := CompareTimestamps(tc.a, tc.b)
		if err != nil || got != tc.want {
			t.Errorf("CompareTimestamps(%s, %s) = %d, %v; want %d", tc.a, tc.b, got, err, tc.want)
		}
		if back, _ := CompareTimestamps(tc.b, tc.a); back != -tc.want {
			t.Errorf("CompareTimestamps(%s, %s) = %d, not the reverse of %d", tc.b, tc.a, back, tc.want)
		}
	}
}

// TestCompareTimestampsNamesTheBadOne: a value outside the grammar is an
// F4 error naming it.
func TestCompareTimestampsNamesTheBadOne(t *testing.T) {
	_, err := CompareTimestamps("2026-07-01T00:00:00Z", "2026-07-01T00:00:00+01:00")
	var te *timestampError
	if !errors.As(err, &te) || te.Value != "2026-07-01T00:00:00+01:00" || !strings.HasPrefix(err.Error(), "F4: ") {
		t.Fatalf("error %v", err)
	}
}

// TestTimestampTime: the Go time of a timestamp is its instant, and a leap
// second becomes the last nanosecond before the next minute.
func TestTimestampTime(t *testing.T) {
	ts, err := ParseTimestamp("2026-07-01T12:34:56.125Z")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 7, 1, 12, 34, 56, 125e6, time.UTC); !ts.Time().Equal(want) {
		t.Fatalf("Time() = %v, want %v", ts.Time(), want)
	}
	leap, err := ParseTimestamp("2016-12-31T23:59:60Z")
	if err != nil {
		t.Fatal(err)
	}
	next := time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := leap.Time(); !got.Before(next) || got.Before(next.Add(-time.Nanosecond)) {
		t.Fatalf("leap second Time() = %v", got)
	}
	if TimestampOf(ts.Time()).Compare(ts) != 0 {
		t.Fatal("TimestampOf(Time()) is another instant")
	}
}

// FuzzTimestampCompare: for two timestamps time.Parse can also read (no leap
// second, at most nine fractional digits), Compare agrees with the Go
// times; Compare is antisymmetric; and Time then TimestampOf is the same
// instant.
func FuzzTimestampCompare(f *testing.F) {
	f.Add("2026-07-01T00:00:00Z", "2026-07-01T00:00:00.5Z")
	f.Add("2016-12-31T23:59:60.1Z", "2017-01-01T00:00:00Z")
	f.Add("0001-01-01T00:00:00.000000001Z", "9999-12-31T23:59:59.999999999Z")
	f.Fuzz(func(t *testing.T, a, b string) {
		ta, errA := ParseTimestamp(a)
		tb, errB := ParseTimestamp(b)
		if errA != nil || errB != nil {
			return
		}
		c := ta.Compare(tb)
		if tb.Compare(ta) != -c {
			t.Fatalf("Compare(%s, %s) = %d but the reverse is %d", a, b, c, tb.Compare(ta))
		}
		readable := func(ts Timestamp) bool { return !ts.leap && len(ts.frac) <= 9 }
		if !readable(ta) || !readable(tb) {
			return
		}
		ga, err1 := time.Parse(time.RFC3339Nano, a)
		gb, err2 := time.Parse(time.RFC3339Nano, b)
		if err1 != nil || err2 != nil {
			t.Fatalf("time.Parse rejects %q or %q: %v %v", a, b, err1, err2)
		}
		if ga.Compare(gb) != c {
			t.Fatalf("Compare(%s, %s) = %d, Go times compare %d", a, b, c, ga.Compare(gb))
		}
		if TimestampOf(ta.Time()).Compare(ta) != 0 || !ta.Time().Equal(ga) {
			t.Fatalf("%s: Time() %v, time.Parse %v", a, ta.Time(), ga)
		}
	})
}
