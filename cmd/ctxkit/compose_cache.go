package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/ctxkit/ctxkit/compose"
)

// cacheFlags are ctxkit compose's placement flags: --placement, --previous,
// --min-prefix and --sticky-margin.
type cacheFlags struct {
	placement    compose.Placement
	previous     string
	minPrefix    int
	stickyMargin float32
	haveAny      bool
	havePrevious bool
}

func (c *cacheFlags) set(name, v string) error {
	c.haveAny = true
	switch name {
	case "placement":
		p, ok := compose.ParsePlacement(v)
		if !ok {
			return fmt.Errorf("unknown placement %q (edges-by-rank, canonical, stable-first)", v)
		}
		c.placement = p
	case "previous":
		c.previous, c.havePrevious = v, true
	case "min-prefix":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("--min-prefix wants a positive integer, got %q", v)
		}
		c.minPrefix = n
	case "sticky-margin":
		m, err := strconv.ParseFloat(v, 32)
		if err != nil || !(m >= 0) || math.IsInf(m, 0) {
			return fmt.Errorf("--sticky-margin wants a finite score margin ≥ 0, got %q", v)
		}
		c.stickyMargin = float32(m)
	}
	return nil
}

// maxPreviousBytes bounds the --previous file.
const maxPreviousBytes = 64 << 20

// readPrevious reads a layout JSON document, or a compose result whose
// "cache" member carries one.
func readPrevious(path string) (*compose.Layout, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--previous: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPreviousBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--previous: %s: %w", path, err)
	}
	if len(data) > maxPreviousBytes {
		return nil, fmt.Errorf("--previous: %s: larger than %d bytes", path, maxPreviousBytes)
	}
	var result struct {
		Cache *struct {
			Layout json.RawMessage `json:"layout"`
		} `json:"cache"`
	}
	if json.Unmarshal(data, &result) == nil && result.Cache != nil && len(result.Cache.Layout) > 0 {
		data = result.Cache.Layout
	}
	l, err := compose.ParseLayout(data)
	if err != nil {
		return nil, fmt.Errorf("--previous: %s: %w", path, err)
	}
	return l, nil
}

// report writes the stable-prefix line of a text-format composition.
func (c *cacheFlags) report(w io.Writer, res *compose.Result) {
	if !c.haveAny {
		return
	}
	r := res.Cache
	fmt.Fprintf(w, "placement=%s stable_prefix_bytes=%d stable_prefix_tokens=%d stable_frames=%d stable_prefix_hash=%s",
		r.Placement, r.StablePrefixBytes, r.StablePrefixTokens, r.StableFrames, r.StablePrefixHash)
	if r.Relay != compose.NotRelaid {
		fmt.Fprintf(w, " relay=%s", r.Relay)
	}
	fmt.Fprintln(w)
	if r.Warning != "" {
		fmt.Fprintf(w, "warning: %s\n", r.Warning)
	}
}
