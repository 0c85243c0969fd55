// Command cachesim simulates an agent session that re-composes its evidence
// every turn and prints, per placement, how much of each prompt a provider
// prompt cache can reuse and what the input costs under Anthropic's cache
// pricing (see package compose/cachesim for the session and cache models).
// Each margin in -sticky adds a row for stable-first with that sticky
// margin (compose.Options.StickyMargin).
//
//	go run ./examples/cachesim -turns 30 -churn 10 -jitter 0.05 -sticky 0.05,0.1
//
// With -sessions N it runs N sessions (seeds -seed to -seed+N-1) and prints
// each row's mean shared prefix with its lowest and highest session.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/compose/cachesim"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("cachesim", flag.ContinueOnError)
	turns := fs.Int("turns", 30, "turns T (compositions) in the session")
	offered := fs.Int("offered", 60, "frames offered each turn")
	churn := fs.Float64("churn", 10, "percentage C of offered frames replaced each turn")
	jitter := fs.Float64("jitter", 0.05, "score jitter J: each score is base ± J")
	model := fs.String("model", "uniform", "which frames are replaced: uniform or tail")
	seed := fs.Uint64("seed", 1, "session seed")
	minPrefix := fs.Int("min-prefix", compose.DefaultMinPrefixTokens, "provider minimum cacheable prefix, tokens")
	price := fs.Float64("price", cachesim.DefaultBaseUSDPerMTok, "base input price, USD per million tokens")
	sticky := fs.String("sticky", "0.1", "comma-separated sticky margins, each adding a stable-first row (empty: none)")
	sessions := fs.Int("sessions", 1, "sessions to run, seeded -seed, -seed+1, ...; above 1, print each row's spread over them")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *turns < 2 || *offered < 1 || *churn < 0 || *churn > 100 || *jitter < 0 || *minPrefix < 1 || *price <= 0 || *sessions < 1 {
		fmt.Fprintln(os.Stderr, "cachesim: want -turns ≥ 2, -offered ≥ 1, 0 ≤ -churn ≤ 100, -jitter ≥ 0, -min-prefix ≥ 1, -price > 0, -sessions ≥ 1 and no arguments")
		return 2
	}
	c := cachesim.Config{Turns: *turns, Offered: *offered, ChurnPercent: *churn, Jitter: *jitter, Seed: *seed,
		MinPrefixTokens: *minPrefix, BaseUSDPerMTok: *price}
	margins, err := parseMargins(*sticky)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cachesim:", err)
		return 2
	}
	switch *model {
	case "uniform":
	case "tail":
		c.Churn = cachesim.TailChurn
	default:
		fmt.Fprintf(os.Stderr, "cachesim: unknown -model %q (uniform, tail)\n", *model)
		return 2
	}
	if *sessions > 1 {
		var all [][]cachesim.Report
		for i := range *sessions {
			sc := c
			sc.Seed = c.Seed + uint64(i)
			all = append(all, simulate(sc, margins))
		}
		if err := writeSpread(os.Stdout, c, all); err != nil {
			fmt.Fprintln(os.Stderr, "cachesim:", err)
			return 1
		}
		return 0
	}
	if err := cachesim.WriteTable(os.Stdout, c, simulate(c, margins)); err != nil {
		fmt.Fprintln(os.Stderr, "cachesim:", err)
		return 1
	}
	return 0
}

// simulate runs the session of c under every placement, then under
// stable-first with each sticky margin.
func simulate(c cachesim.Config, margins []float32) []cachesim.Report {
	reports := cachesim.Run(c, compose.Placements()...)
	s := cachesim.NewSession(c)
	for _, m := range margins {
		sc := c
		sc.StickyMargin = m
		reports = append(reports, s.Run(sc, compose.StableFirst))
	}
	return reports
}

// writeSpread writes, per row, the mean shared prefix over the sessions in
// all (one slice of reports per seed, rows in the same order) with the
// lowest and highest session, and the mean reusable share and cost.
func writeSpread(w io.Writer, c cachesim.Config, all [][]cachesim.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "T=%d, C=%g%% (%s churn), J=%g, %d frames offered, %d sessions (seeds %d-%d)\n\n",
		c.Turns, c.ChurnPercent, c.Churn, c.Jitter, c.Offered, len(all), c.Seed, c.Seed+uint64(len(all))-1)
	b.WriteString("| placement | mean shared prefix | lowest session | highest session | mean reusable cache | mean cost/turn (cached) |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for row := range all[0] {
		lo, hi := math.Inf(1), math.Inf(-1)
		var shared, reusable, cost float64
		for _, reports := range all {
			r := reports[row]
			lo, hi = min(lo, r.SharedPrefixFraction), max(hi, r.SharedPrefixFraction)
			shared += r.SharedPrefixFraction
			reusable += r.ReusableFraction
			cost += r.CostPerTurn
		}
		n := float64(len(all))
		fmt.Fprintf(&b, "| %s | %.1f%% | %.1f%% | %.1f%% | %.1f%% | $%.5f |\n", cachesim.Label(all[0][row]),
			100*shared/n, 100*lo, 100*hi, 100*reusable/n, cost/n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// parseMargins parses a comma-separated list of sticky margins, each
// positive and finite.
func parseMargins(v string) ([]float32, error) {
	if v == "" {
		return nil, nil
	}
	var out []float32
	for _, f := range strings.Split(v, ",") {
		m, err := strconv.ParseFloat(strings.TrimSpace(f), 32)
		if err != nil || !(m > 0) || math.IsInf(m, 0) {
			return nil, fmt.Errorf("-sticky wants positive margins separated by commas, got %q", f)
		}
		out = append(out, float32(m))
	}
	return out, nil
}
