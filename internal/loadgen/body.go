package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// ComposeBody returns a POST /v1/compose body with n valid offers of size
// content bytes each, spread over four providers, and a budget of half
// their total cost, so that some frames are packed and some excluded.
func ComposeBody(n, size int) []byte {
	type offer struct {
		Provider string       `json:"provider"`
		Frame    *frame.Frame `json:"frame"`
	}
	offers := make([]offer, n)
	total := 0
	for i := range offers {
		content := fmt.Sprintf("chunk %d of the load corpus. ", i)
		content += strings.Repeat("Composition packs frames by rendered cost under one budget. ", size/60+1)
		content = content[:size]
		f := &frame.Frame{ID: fmt.Sprintf("load:%d", i), Kind: frame.KindSnippet, Title: fmt.Sprintf("Load chunk %d", i),
			Content: content, Score: float32(i%20) / 20, TokenCost: uint32(frame.BudgetTokens(content)),
			CitationLabel: fmt.Sprintf("load.md L%d-%d", i*10+1, i*10+10)}
		offers[i] = offer{Provider: fmt.Sprintf("provider-%d", i%4), Frame: f}
		total += int(f.TokenCost) + 40
	}
	b, err := json.Marshal(map[string]any{"offers": offers, "budget": total / 2})
	if err != nil { // frames built above always encode
		panic(err)
	}
	return b
}

// CheckCompose accepts a complete /v1/compose answer: valid JSON holding a
// prompt and an audit.
func CheckCompose(b []byte) error {
	if !json.Valid(b) {
		return errors.New("answer is not valid JSON")
	}
	if !bytes.HasPrefix(b, []byte(`{"prompt":`)) || !bytes.Contains(b, []byte(`"audit":{`)) {
		return errors.New("answer lacks prompt or audit")
	}
	return nil
}
