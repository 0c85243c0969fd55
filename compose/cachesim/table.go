package cachesim

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable writes reports as a Markdown table, one row per report, under
// a caption naming the session: churn percentage and model, jitter, turns.
func WriteTable(w io.Writer, c Config, reports []Report) error {
	c = c.withDefaults()
	var b strings.Builder
	fmt.Fprintf(&b, "T=%d, C=%g%% (%s churn), J=%g, %d frames offered, budget %d budget tokens, provider minimum %d tokens, $%g/MTok base input\n\n",
		c.Turns, c.ChurnPercent, c.Churn, c.Jitter, c.Offered, budgetOf(reports), c.MinPrefixTokens, c.BaseUSDPerMTok)
	b.WriteString("| placement | mean prompt bytes | mean shared prefix bytes | shared prefix | reusable cache | best frame at an edge | mean stable tokens | cost/turn (cached) | cost/turn (uncached) | reusable, marked host | cost/turn, marked host |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range reports {
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.1f%% | %.1f%% | %.0f%% | %.0f | $%.5f | $%.5f | %.1f%% | $%.5f |\n",
			r.Placement, r.MeanPromptBytes, r.MeanSharedPrefixBytes, 100*r.SharedPrefixFraction,
			100*r.ReusableFraction, 100*r.BestAtEdge, r.MeanStablePrefixTokens, r.CostPerTurn, r.UncachedCostPerTurn,
			100*r.MarkedReusableFraction, r.MarkedCostPerTurn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func budgetOf(reports []Report) int {
	if len(reports) == 0 {
		return 0
	}
	return reports[0].Budget
}
