package compose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The decoding side of the result's JSON: a client of the HTTP API, and
// the CLI's --remote runner, read back exactly what MarshalJSON wrote, so
// that one Result prints the same whether it was composed here or there.

type entryIn struct {
	entryJSON
	Attestation json.RawMessage `json:"attestation"`
}

type auditIn struct {
	auditJSON
	Entries []entryIn `json:"entries"`
}

type cacheIn struct {
	cacheJSON
	Layout json.RawMessage `json:"layout"`
}

type resultIn struct {
	resultJSON
	Audit auditIn  `json:"audit"`
	Cache *cacheIn `json:"cache"`
}

// UnmarshalJSON decodes what Result.MarshalJSON writes: re-encoding the
// decoded result gives the same bytes. Enumerations must be spelled as
// their String forms. Without a "cache" member the whole prompt is Stable.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultIn
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("compose: decode result: %w", err)
	}
	out := Result{Prompt: j.Prompt, Citations: make([]Citation, len(j.Citations))}
	for i, c := range j.Citations {
		out.Citations[i] = Citation(c)
	}
	if err := out.Audit.fromJSON(&j.Audit); err != nil {
		return fmt.Errorf("compose: decode result: %w", err)
	}
	if j.Cache != nil {
		if err := out.fromCacheJSON(j.Cache); err != nil {
			return fmt.Errorf("compose: decode result: cache: %w", err)
		}
	} else {
		// Without a report nothing says where a stable prefix ends: the
		// whole prompt reads as Stable.
		out.Cache.StablePrefixBytes = -1
	}
	*r = out
	return nil
}

func (a *Audit) fromJSON(j *auditIn) error {
	*a = Audit{Budget: j.Budget, TokensUsed: j.TokensUsed, Strategy: j.Strategy, Packer: j.Packer,
		StickyMargin: j.StickyMargin, Entries: make([]Entry, len(j.Entries))}
	for i := range j.Entries {
		if err := a.Entries[i].fromJSON(&j.Entries[i]); err != nil {
			return fmt.Errorf("audit: entries[%d]: %w", i, err)
		}
	}
	return nil
}

func (e *Entry) fromJSON(j *entryIn) error {
	var ok bool
	*e = Entry{Frame: j.Frame}
	if e.Disposition, ok = parseName(j.Disposition, Included, Excluded); !ok {
		return fmt.Errorf("disposition: unknown %q", j.Disposition)
	}
	if e.Sticky, ok = parseName(j.Sticky, NotSticky, StickyDisplaced); !ok {
		return fmt.Errorf("sticky: unknown %q", j.Sticky)
	}
	if j.Verification != "" {
		if e.Verification, ok = parseName(j.Verification, Verifiable, Unverifiable); !ok {
			return fmt.Errorf("verification: unknown %q", j.Verification)
		}
	}
	if r := j.Reason; r != nil {
		if e.Reason.Kind, ok = parseName(r.Kind, Duplicate, UnresolvedReference); !ok {
			return fmt.Errorf("reason: unknown kind %q", r.Kind)
		}
		if r.Kept != nil {
			e.Reason.Kept = *r.Kept
		}
		if r.Cost != nil && r.Remaining != nil {
			e.Reason.Cost, e.Reason.Remaining = *r.Cost, *r.Remaining
		}
	}
	att, err := decodeAttestation(j.Attestation)
	if err != nil {
		return err
	}
	e.Attestation = att
	return nil
}

func (r *Result) fromCacheJSON(j *cacheIn) error {
	var ok bool
	c := CacheReport{StablePrefixBytes: j.StablePrefixBytes, StablePrefixTokens: j.StablePrefixTokens,
		StablePrefixHash: j.StablePrefixHash, StableFrames: j.StableFrames, MinPrefixTokens: j.MinPrefixTokens,
		Warning: j.Warning}
	if c.Placement, ok = ParsePlacement(j.Placement); !ok {
		return fmt.Errorf("placement: unknown %q", j.Placement)
	}
	if c.Relay, ok = parseName(j.Relay, NotRelaid, RelayDropped); !ok {
		return fmt.Errorf("relay: unknown %q", j.Relay)
	}
	if len(j.Layout) > 0 && !bytes.Equal(j.Layout, []byte("null")) {
		l, err := ParseLayout(j.Layout)
		if err != nil {
			return err
		}
		r.Layout = l
	}
	r.Cache, r.reported = c, true
	return nil
}

// enumName returns names[v], the spelling of an enumeration value from
// first on, or kind(v) for a value outside the table.
func enumName[T ~uint8](v, first T, names []string, kind string) string {
	if v >= first && int(v) < len(names) {
		return names[v]
	}
	return kind + "(" + strconv.Itoa(int(v)) + ")"
}

// parseName returns the value from first to last whose String is s.
func parseName[T interface {
	~uint8
	String() string
}](s string, first, last T) (T, bool) {
	for v := first; v <= last; v++ {
		if v.String() == s {
			return v, true
		}
	}
	return 0, false
}

// compactJSON is b without insignificant white space (b itself when it
// is not valid JSON; the decoder has checked it is).
func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}
