package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
)

// A bounded memoryUsage drops its oldest events and then refuses a report
// reaching back past them instead of undercounting it.
func TestMemoryUsageIsBounded(t *testing.T) {
	m := &memoryUsage{Max: 4}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ { // the fifth drops two, keeping 3

		m.Record([]UsageEvent{{Frame: frame.ID{Provider: "docs", Frame: fmt.Sprint(i)}, TokenCost: 1, ServedAt: t0.Add(time.Duration(i) * time.Second)}})
	}
	if _, err := m.Usage(context.Background(), time.Time{}); !errors.Is(err, errUsageForgotten) {
		t.Fatalf("a report over dropped events: %v, want errUsageForgotten", err)
	}
	r, err := m.Usage(context.Background(), t0.Add(2*time.Second))
	if err != nil || r.BudgetConsumed != 3 {
		t.Fatalf("the events still held: %+v %v", r, err)
	}
}
