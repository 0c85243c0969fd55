package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/host"
)

// The checks in this file keep query and compose from exiting 0 with a
// prompt that holds no evidence: each says on stderr why nothing was
// composed, and the command exits 1 (as grep does when nothing matched).

// maxQueryBudget and maxQueryFrames bound query's --budget and
// --max-frames (the service's limits too).
const (
	maxQueryBudget = 1 << 30
	maxQueryFrames = 1 << 16
)

// checkKindName says what is wrong with k as a --kind value, or "" when it
// is a kind name: a lower-case ASCII letter, then lower-case letters,
// digits and "_", "-", ".", ":" (a vendor kind such as acme:ticket), at
// most 64 bytes. The seven base kinds are such names; any other name is
// sent as given and is opaque to providers (U2).
func checkKindName(k string) string {
	const want = "a kind name is a lower-case letter followed by lower-case letters, digits, '_', '-', '.' or ':' (base kinds: snippet symbol fact doc memory episode graph)"
	switch {
	case strings.TrimSpace(k) == "":
		return "--kind is blank"
	case len(k) > 64:
		return fmt.Sprintf("--kind %.20q… is longer than 64 bytes", k)
	case k != strings.ToLower(k) && checkKindName(strings.ToLower(k)) == "":
		return fmt.Sprintf("--kind %q: kind names are lower case (did you mean %q?)", k, strings.ToLower(k))
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		ok := c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || strings.IndexByte("_-.:", c) >= 0)
		if !ok {
			return fmt.Sprintf("--kind %q is not a kind name: %s", k, want)
		}
	}
	return ""
}

// kindsNotServed reports, when kinds were asked for and every provider
// leg was skipped because it serves none of them, a message naming what
// each provider declares; "" otherwise.
func kindsNotServed(fo *host.FanOut) string {
	if len(fo.Query.Kinds) == 0 || len(fo.Outcomes) == 0 {
		return ""
	}
	var declared []string
	for _, o := range fo.Outcomes {
		if o.Status != host.StatusKindsNotServed {
			return ""
		}
		declared = append(declared, fmt.Sprintf("%s declares %s", o.Provider, kindsText(o.Declared)))
	}
	return fmt.Sprintf("no provider serves kind %s (%s)", kindsText(fo.Query.Kinds), strings.Join(declared, "; "))
}

func kindsText[K ~string](ks []K) string {
	if len(ks) == 0 {
		return "no kinds"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// emptyQuery says why a query composed nothing, or "" when it composed a
// frame.
func emptyQuery(fo *host.FanOut, res *compose.Result) string {
	if len(res.Audit.Included()) > 0 {
		return ""
	}
	if msg := kindsNotServed(fo); msg != "" {
		return msg
	}
	if len(res.Audit.Entries) == 0 {
		queried, small := 0, 0
		for _, o := range fo.Outcomes {
			if !o.Status.Skipped() {
				queried++
			}
			if o.Status == host.StatusShareTooSmall {
				small++
			}
		}
		switch {
		case len(fo.Outcomes) == 0:
			return "nothing composed: no provider is registered"
		case queried == 0 && small > 0:
			return fmt.Sprintf("nothing composed: a budget of %d leaves %d provider(s) a share too small for one frame's fence (%d budget tokens each); raise --budget",
				fo.Budget, small, host.FrameChrome(fo.Outcomes[0].Provider))
		case queried == 0:
			return "nothing composed: no provider was queried (see the fan-out report above)"
		case refusedTotal(fo) > 0:
			return fmt.Sprintf("nothing composed: the audit refused every frame the providers returned (%d frame(s); see the fan-out report above)", refusedTotal(fo))
		case len(fo.Failures()) == queried:
			return "nothing composed: every provider queried failed or was dropped by the audit (see the fan-out report above)"
		}
		msg := "nothing composed: no provider returned a frame for this goal"
		if fo.Budgeted {
			// A provider may have had frames that were larger than the
			// max_tokens its share left after the fence reserve.
			msg += " within the max_tokens it was asked for (see the fan-out report above; a larger --budget asks for more)"
		}
		return msg
	}
	return "nothing composed: " + excludedSummary(res.Audit.Excluded(), res.Audit.Budget)
}

// refusedTotal counts the frames the per-leg audits refused, each once.
func refusedTotal(fo *host.FanOut) int {
	n := 0
	for i := range fo.Outcomes {
		n += fo.Outcomes[i].RefusedFrames()
	}
	return n
}

// emptyCompose says why compose composed nothing from offered offers, or
// "" when it composed a frame.
func emptyCompose(offered int, res *compose.Result) string {
	switch {
	case offered == 0:
		return "nothing to compose: the input holds no valid offer"
	case len(res.Audit.Included()) > 0:
		return ""
	}
	return "nothing composed: " + excludedSummary(res.Audit.Excluded(), res.Audit.Budget)
}

// excludedSummary counts the excluded entries by reason, and for frames
// over the budget names the cheapest one's rendered cost.
func excludedSummary(ex []compose.Entry, budget int) string {
	counts := map[string]int{}
	cheapest := -1
	for _, e := range ex {
		counts[e.Reason.Kind.String()]++
		if k := e.Reason.Kind; (k == compose.OverBudget || k == compose.PackingStopped) && (cheapest < 0 || e.Reason.Cost < cheapest) {
			cheapest = e.Reason.Cost
		}
	}
	return reasonSummary(len(ex), counts, budget, cheapest)
}

// reasonSummary spells the counts of excluded frames by reason, sorted by
// reason, with the cheapest over-budget frame's cost when there is one.
func reasonSummary(n int, counts map[string]int, budget, cheapest int) string {
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s=%d", k, counts[k])
	}
	msg := fmt.Sprintf("all %d frame(s) excluded (%s)", n, strings.Join(parts, " "))
	if cheapest >= 0 {
		msg += fmt.Sprintf("; the cheapest renders at %d budget tokens against a budget of %d", cheapest, budget)
	}
	return msg
}
