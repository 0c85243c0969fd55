package rule_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
)

// A frame whose declared cost disagrees with its content breaks B3; the
// violation names the rule as a constant and serialises as its anchor.
func Example() {
	f := frame.Frame{ID: "a", Kind: frame.KindDoc, Title: "A", Content: "abcdefgh", Score: 0.5, TokenCost: 1, CitationLabel: "a"}
	var re *frame.RuleError
	if errors.As(f.Validate().Err(), &re) && re.Rule == rule.B3 {
		b, _ := json.Marshal(struct {
			Rule rule.Rule `json:"rule"`
		}{re.Rule})
		fmt.Println(re.Field, string(b))
	}
	// Output: token_cost {"rule":"B3"}
}
