package cachesim

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteTable writes reports as a Markdown table, one row per report (named
// by Label), under a caption naming the session: churn percentage and
// model, jitter, turns.
func WriteTable(w io.Writer, c Config, reports []Report) error {
	c = c.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "T=%d, C=%g%% (%s churn), J=%g, %d frames offered, budget %d budget tokens, provider minimum %d tokens, $%g/MTok base input\n\n",
		c.Turns, c.ChurnPercent, c.Churn, c.Jitter, c.Offered, budgetOf(reports), c.MinPrefixTokens, c.BaseUSDPerMTok)
	b.WriteString("| placement | mean prompt bytes | mean shared prefix bytes | shared prefix | reusable cache | best frame at an edge | mean stable tokens | cost/turn (cached) | cost/turn (uncached) | reusable, marked host | cost/turn, marked host | held / displaced per turn |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range reports {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.1f%% | %.1f%% | %.0f%% | %.0f | $%.5f | $%.5f | %.1f%% | $%.5f | %.2f / %.2f |\n",
			Label(r), r.MeanPromptBytes, r.MeanSharedPrefixBytes, 100*r.SharedPrefixFraction,
			100*r.ReusableFraction, 100*r.BestAtEdge, r.MeanStablePrefixTokens, r.CostPerTurn, r.UncachedCostPerTurn,
			100*r.MarkedReusableFraction, r.MarkedCostPerTurn, r.HeldPerTurn, r.DisplacedPerTurn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Label names a report's composition: its placement, and "+ sticky M" when
// it ran with a sticky margin, as in "stable-first + sticky 0.1".
func Label(r Report) string {
	if r.StickyMargin > 0 {
		return r.Placement.String() + " + sticky " + strconv.FormatFloat(float64(r.StickyMargin), 'g', -1, 32)
	}
	return r.Placement.String()
}

func budgetOf(reports []Report) int {
	if len(reports) == 0 {
		return 0
	}
	return reports[0].Budget
}
