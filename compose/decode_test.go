package compose

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// A result read back from its JSON encodes to the same bytes, prints the
// same audit text and splits the same stable prefix: what the CLI's
// --remote runner relies on to print as the local command does.
func TestResultJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 19))
	offers := workedVector()
	l := ledgerStates{offers[2].ID(): testState{"attested"}, offers[3].ID(): testState{"invalid"}}
	var previous *Layout
	for iter := 0; iter < 200; iter++ {
		opts := &Options{Strategy: []Strategy{ScoreDescending{}, RoundRobinByRank{}, PerProviderQuota{K: 1}}[rng.IntN(3)],
			Packer: Packer(rng.IntN(2)), Attestations: l}
		if rng.IntN(2) == 0 {
			opts.Placement, opts.Previous = Placement(rng.IntN(3)), previous
			opts.Cache, opts.StickyMargin = &CacheOptions{MinPrefixTokens: rng.IntN(40)}, float32(rng.IntN(3))/10
		}
		res := ForPrompt(offers, rng.IntN(120), opts)
		previous = res.Layout
		want, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(want, &back); err != nil {
			t.Fatalf("iter %d: %v\n%s", iter, err, want)
		}
		got, err := back.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("iter %d: re-encoded\n%s\nwant\n%s", iter, got, want)
		}
		var a, b bytes.Buffer
		_ = res.Audit.WriteText(&a)
		_ = back.Audit.WriteText(&b)
		if a.String() != b.String() || (res.HasCacheReport() && back.Stable() != res.Stable()) || len(back.Audit.Attested()) != len(res.Audit.Attested()) {
			t.Fatalf("iter %d: decoded result reads differently:\n%s\nvs\n%s", iter, b.String(), a.String())
		}
	}
}

func TestResultJSONRefusesUnknownNames(t *testing.T) {
	res := ForPrompt(workedVector(), 60, nil)
	good, _ := res.MarshalJSON()
	for _, bad := range []struct{ from, to string }{
		{`"disposition":"included"`, `"disposition":"kept"`},
		{`"kind":"duplicate"`, `"kind":"twin"`},
		{`"verification":"verifiable"`, `"verification":"maybe"`},
		{`"attestation":{"state":"not_checked"}`, `"attestation":{}`},
	} {
		b := bytes.Replace(good, []byte(bad.from), []byte(bad.to), 1)
		if bytes.Equal(b, good) {
			t.Fatalf("fixture lacks %s", bad.from)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err == nil {
			t.Errorf("%s decoded", bad.to)
		}
	}
}
