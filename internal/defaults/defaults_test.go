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
