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

func ExampleByName() {
	c, _ := tokens.ByName("canonical")
	fmt.Println(c.Count("twelve bytes")) // CGP budget tokens: ceil(12/4)
	// Output: 3
}

func ExampleSafe() {
	// Safe charges high-entropy runs (hashes, UUIDs, base64) at about
	// 1.2 characters per token, where the seed's rule assumed 2.5.
	uuid := "3f2b8c1e-9a4d-4e7b-b2c5-7d1e0f9a6b38"
	conservative, _ := tokens.ByName("conservative")
	exact, _ := tokens.ByName("cl100k_base")
	fmt.Println(tokens.Safe{}.Count(uuid), conservative.Count(uuid), exact.Count(uuid))
	// Output: 34 15 34
}

func ExampleByName_exact() {
	c, _ := tokens.ByName("o200k_base") // vocabulary compiled in: no download
	fmt.Println(c.Name(), c.Count("Will the next request fit?"))
	// Output: o200k_base 6
}
