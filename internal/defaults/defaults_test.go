package defaults

import (
	"testing"
	"time"
)

func TestIfNotPositive(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{{0, 5}, {-1, 5}, {3, 3}} {
		v := c.in
		IfNotPositive(&v, 5)
		if v != c.want {
			t.Errorf("IfNotPositive(%d, 5) = %d, want %d", c.in, v, c.want)
		}
	}
}

func TestIfZero(t *testing.T) {
	for _, c := range []struct{ in, want int }{{0, 5}, {-1, -1}, {3, 3}} {
		v := c.in
		IfZero(&v, 5)
		if v != c.want {
			t.Errorf("IfZero(%d, 5) = %d, want %d", c.in, v, c.want)
		}
	}
	s := ""
	if IfZero(&s, "dev"); s != "dev" {
		t.Errorf("IfZero(\"\", dev) = %q", s)
	}
	if IfZero(&s, "other"); s != "dev" {
		t.Errorf("IfZero(dev, other) = %q", s)
	}
}
