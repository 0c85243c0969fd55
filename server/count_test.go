package server

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/compose"
)

// TestCountComposition checks the frame metrics against the audit of a
// composition with included, duplicate, over-budget and packing-stopped
// entries.
func TestCountComposition(t *testing.T) {
	h := New(nil)
	want := map[string]int{}
	for _, b := range encodeSeeds(t) {
		res, _, ok := composeForTest(h, b)
		if !ok {
			t.Fatal("not composed")
		}
		h.countComposition(res)
		want["composed"] += len(res.Audit.Included())
		for _, e := range res.Audit.Excluded() {
			want[e.Reason.Kind.String()]++
		}
	}
	var out bytes.Buffer
	if _, err := h.metrics.writeTo(&out); err != nil {
		t.Fatal(err)
	}
	lines := []string{fmt.Sprintf("ctxkit_frames_composed_total %d", want["composed"])}
	for _, k := range []compose.ReasonKind{compose.Duplicate, compose.OverBudget, compose.PackingStopped} {
		if want[k.String()] == 0 {
			t.Fatalf("no %s entry in the test compositions", k)
		}
		lines = append(lines, fmt.Sprintf("ctxkit_frames_excluded_total{reason=%q} %d", k.String(), want[k.String()]))
	}
	for _, l := range lines {
		if !strings.Contains(out.String(), l+"\n") {
			t.Errorf("metrics lack %q:\n%s", l, out.String())
		}
	}
}
