package tokens_test

import (
	"fmt"

	"github.com/ctxkit/ctxkit/tokens"
)

func ExampleForModel() {
	for _, model := range []string{"gpt-4o", "gpt-4", "claude-sonnet-4-6"} {
		c := tokens.ForModel(model)
		fmt.Println(model, c.Name(), c.Count("The harbour town woke slowly that winter."))
	}
	// Output:
	// gpt-4o o200k_base 8
	// gpt-4 cl100k_base 8
	// claude-sonnet-4-6 safe 11
}

func ExampleCanonical() {
	fmt.Println(tokens.Canonical{}.Count("twelve bytes")) // CGP budget tokens: ceil(12/4)
	// Output: 3
}
