package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/wire"
)

const composeUsage = `usage: ctxkit compose [FILE|-] --budget N [--strategy NAME] [--packer NAME]
                     [--format text|json] [--skip-invalid]
                     [--placement NAME] [--previous FILE] [--min-prefix N]
                     [--sticky-margin M]

Compose offered frames into one prompt block under a budget of N canonical
budget tokens (ceil(bytes/4) of each rendered block, fence included; the
preamble is not charged): cross-provider dedup, ranking, packing, placement
at the edges, injection-proof fences, a citation map and an audit that names
every frame's fate.

FILE (or standard input when it is "-" or absent) holds offers: NDJSON of
{"provider": ID, "frame": FRAME}, or one JSON array of them.

Every offer is validated first. By default any violation is printed as
"line N: RULE field: detail" and nothing is composed (exit 1).
--skip-invalid composes the valid offers and lists each skipped one with its
rule on standard error.

--strategy   score-descending (default), round-robin-by-rank,
             per-provider-quota (K=3) or per-provider-quota:K
--packer     first-fit (default) or stop-at-first-miss
--placement  edges-by-rank (default), canonical or stable-first
--previous   the previous turn's layout: a layout JSON file, or the
             --format json output of the previous compose (its cache.layout);
             stable-first keeps its front so a prompt cache can reuse it
--min-prefix the provider's minimum cacheable prefix in tokens (default
             1024); a shorter stable prefix is warned about
--sticky-margin
             frames of the --previous layout rank as if their score were
             higher by M (default 0: off), so score jitter below M does
             not swap them out and break the cached prefix; the audit
             marks frames the margin held in or displaced
--format     text (default): the prompt on standard output, one audit line per
             frame and a summary on standard error;
             json: the whole result {"prompt","citations","audit"} on
             standard output ("cache" too when a placement flag is given)

Exit status: 0 composed at least one frame, 1 an offer is invalid (without
--skip-invalid) or nothing was composed (no valid offer, or none fits the
budget; stderr says which), 2 usage error or input that cannot be read or
parsed.

Example:
  ctxkit compose --budget 200 cmd/ctxkit/testdata/compose/worked-vector.ndjson
`

// composeFlags are the parsed arguments of ctxkit compose.
type composeFlags struct {
	file        string
	budget      int
	haveBudget  bool
	strategy    string // the request's strategy name (parseStrategy)
	quota       int    // and its quota
	packer      compose.Packer
	json        bool
	skipInvalid bool
	cache       cacheFlags
}

func parseComposeFlags(args []string) (*composeFlags, error) {
	fl := &composeFlags{}
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			files = append(files, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		needValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			return args[i], nil
		}
		switch name {
		case "budget":
			v, err := needValue()
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("--budget wants a non-negative integer, got %q", v)
			}
			fl.budget, fl.haveBudget = n, true
		case "strategy":
			v, err := needValue()
			if err != nil {
				return nil, err
			}
			if fl.strategy, fl.quota, err = parseStrategy(v); err != nil {
				return nil, err
			}
		case "packer":
			v, err := needValue()
			if err != nil {
				return nil, err
			}
			p, ok := compose.ParsePacker(v)
			if !ok {
				return nil, fmt.Errorf("unknown packer %q (first-fit, stop-at-first-miss)", v)
			}
			fl.packer = p
		case "format":
			v, err := needValue()
			if err != nil {
				return nil, err
			}
			switch v {
			case "text":
				fl.json = false
			case "json":
				fl.json = true
			default:
				return nil, fmt.Errorf("unknown format %q (text, json)", v)
			}
		case "placement", "previous", "min-prefix", "sticky-margin":
			v, err := needValue()
			if err != nil {
				return nil, err
			}
			if err := fl.cache.set(name, v); err != nil {
				return nil, err
			}
		case "skip-invalid":
			if hasValue {
				return nil, fmt.Errorf("--skip-invalid takes no value")
			}
			fl.skipInvalid = true
		default:
			return nil, fmt.Errorf("unknown flag %s", a)
		}
	}
	if len(files) > 1 {
		return nil, fmt.Errorf("one input at a time, got %d", len(files))
	}
	if len(files) == 1 {
		fl.file = files[0]
	}
	if !fl.haveBudget {
		return nil, fmt.Errorf("--budget is required")
	}
	return fl, nil
}

// parseStrategy checks a --strategy value and spells it as the request's
// strategy name and quota: zero (the request's default K) unless the value
// names one; per-provider-quota:0 means K=1, as in the composer.
func parseStrategy(v string) (name string, quota int, err error) {
	name, arg, hasArg := strings.Cut(v, ":")
	switch {
	case name == compose.NameScoreDescending && !hasArg,
		name == compose.NameRoundRobinByRank && !hasArg,
		name == compose.NamePerProviderQuota && !hasArg:
		return name, 0, nil
	case name == compose.NamePerProviderQuota:
		k, err := strconv.Atoi(arg)
		if err != nil || k < 0 {
			return "", 0, fmt.Errorf("per-provider-quota:K wants a non-negative integer K, got %q", arg)
		}
		return name, max(k, 1), nil
	}
	return "", 0, fmt.Errorf("unknown strategy %q (score-descending, round-robin-by-rank, per-provider-quota[:K])", v)
}

// request is the service's compose request for the flags: what the local
// and the remote runner both compose from.
func (fl *composeFlags) request(offers []compose.Offer) (*api.ComposeRequest, error) {
	req := &api.ComposeRequest{Offers: offers, Budget: &fl.budget, Packer: fl.packer.String()}
	req.Strategy, req.Quota = fl.strategy, fl.quota
	c := &fl.cache
	if !c.haveAny {
		return req, nil
	}
	// Naming any placement flag asks for the cache report, as locally.
	req.Placement, req.StickyMargin = c.placement.String(), float64(c.stickyMargin)
	if c.minPrefix > 0 {
		req.MinPrefixTokens = &c.minPrefix
	}
	if c.havePrevious {
		l, err := readPrevious(c.previous)
		if err != nil {
			return nil, err
		}
		if req.Previous, err = json.Marshal(l); err != nil {
			return nil, fmt.Errorf("--previous: %w", err)
		}
	}
	return req, nil
}

func runCompose(ctx context.Context, args []string, s stdio) int {
	return composeWith(ctx, localRunner{}, args, s)
}

func composeWith(ctx context.Context, r runner, args []string, s stdio) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprint(s.out, composeUsage)
			return exitOK
		}
	}
	fl, err := parseComposeFlags(args)
	if err != nil {
		fmt.Fprintf(s.err, "compose: %v\n\n%s", err, composeUsage)
		return exitUsage
	}
	name, in, err := openInput(fl.file, s.in)
	if err != nil {
		fmt.Fprintf(s.err, "compose: %v\n", err)
		return exitUsage
	}
	defer in.Close()
	offers, lines, err := wire.ReadOffers(in, nil)
	if err != nil {
		fmt.Fprintf(s.err, "compose: %s: %v\n", name, err)
		return exitUsage
	}
	valid, invalid := validOffers(s, name, offers, lines, fl.skipInvalid)
	if invalid > 0 && !fl.skipInvalid {
		fmt.Fprintf(s.err, "compose: %s: %d of %d offers invalid; nothing composed (use --skip-invalid to compose the rest)\n",
			name, invalid, len(offers))
		return exitFailed
	}
	req, err := fl.request(valid)
	if err != nil {
		fmt.Fprintf(s.err, "compose: %v\n", err)
		return exitUsage
	}
	res, err := r.compose(ctx, req)
	if err != nil {
		return requestFailed("compose", s, err)
	}
	if fl.json {
		if err := res.WriteJSON(s.out); err != nil {
			fmt.Fprintf(s.err, "compose: %v\n", err)
			return exitUsage
		}
	} else {
		if err := writePrompt(s.out, res.Prompt); err != nil {
			fmt.Fprintf(s.err, "compose: %v\n", err)
			return exitUsage
		}
		_ = res.Audit.WriteText(s.err)
		fl.cache.report(s.err, res)
	}
	if invalid > 0 {
		fmt.Fprintf(s.err, "compose: %s: skipped %d invalid of %d offers\n", name, invalid, len(offers))
	}
	if msg := emptyCompose(len(valid), res); msg != "" {
		fmt.Fprintf(s.err, "compose: %s: %s\n", name, msg)
		return exitFailed
	}
	return exitOK
}

// validOffers validates every offer before anything is composed, printing
// each violation, and returns the valid ones and how many were not.
func validOffers(s stdio, name string, offers []compose.Offer, lines []int, skip bool) ([]compose.Offer, int) {
	valid := make([]compose.Offer, 0, len(offers))
	invalid := 0
	verb := "invalid"
	if skip {
		verb = "skipped"
	}
	for i := range offers {
		o := &offers[i]
		vs := o.Validate()
		if len(vs) == 0 {
			valid = append(valid, *o)
			continue
		}
		invalid++
		for _, v := range vs {
			// The offer's id and the values a violation quotes come from
			// whoever wrote the offers: quoted and escaped, one line each.
			fmt.Fprintf(s.err, "compose: %s: line %d: %s %s: %s\n", name, lines[i], verb, safetext.Quote(o.ID().String()), safetext.Escape(v.Error()))
		}
	}
	return valid, invalid
}
