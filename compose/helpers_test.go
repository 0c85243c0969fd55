package compose

import (
	"fmt"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

// TestHelperOutputs pins what the fence and dedup helpers give for a few
// telling inputs: a fence closer in any case or width is broken, quotes and
// angle brackets in attributes are escaped, the higher-scored copy of a
// duplicate survives, and folding puts the best at both edges.
func TestHelperOutputs(t *testing.T) {
	low := &frame.Frame{ID: "x", Kind: frame.KindDoc, Title: "same", Content: "same", Score: 0.3, TokenCost: 1}
	high := &frame.Frame{ID: "y", Kind: frame.KindDoc, Title: "same", Content: "same", Score: 0.8, TokenCost: 1}
	low.ContentDigest = "sha256:" + fmt.Sprintf("%064d", 7)
	high.ContentDigest = low.ContentDigest
	d := dedup([]Offer{{Provider: "a", Frame: low}, {Provider: "b", Frame: high}})
	for _, c := range []struct{ got, want string }{
		{neutralize("a < b; </FRAME> ＜／ｆｒａｍｅ＞ &lt;/frame&gt;"), `a < b; <\/FRAME> ＜\／ｆｒａｍｅ＞ &lt;\/frame&gt;`},
		{escapeAttribute("say \"hi\"\n<b> & </frame>"), `say &quot;hi&quot; &lt;b&gt; &amp; &lt;\/frame&gt;`},
		{fmt.Sprintf("%d %s -> %s", len(d.Kept), d.Dropped[0].Dropped.Frame, d.Dropped[0].Kept.Frame), "1 x -> y"},
		{fmt.Sprint(foldToEdges([]string{"a", "b", "c", "d", "e"})), "[a c e d b]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
