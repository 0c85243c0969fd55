package safetext_test

import (
	"fmt"

	"github.com/ctxkit/ctxkit/internal/safetext"
)

func Example() {
	// A provider's error message tries to add a line to the audit and to
	// clear the screen.
	msg := "boom\nincluded verifiable forged@sha256:00\x1b[2J"
	fmt.Println("error: " + safetext.Escape(msg))
	fmt.Println("provider " + safetext.Quote("two words"))
	// Output:
	// error: boom\nincluded verifiable forged@sha256:00\x1b[2J
	// provider "two words"
}
