package tokens

import (
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// canonical must agree with the frame package's budget-token rule: both
// are CGP budget tokens, ceil(bytes/4).
func TestCanonicalAgreesWithFrameBudgetTokens(t *testing.T) {
	for _, s := range []string{"", "a", "abcd", "abcde", "你好", "😀x", strings.Repeat("z", 4097)} {
		if got, want := (canonical{}).Count(s), frame.BudgetTokens(s); got != want {
			t.Errorf("Canonical(%q) = %d, frame.BudgetTokens = %d", s, got, want)
		}
	}
}
