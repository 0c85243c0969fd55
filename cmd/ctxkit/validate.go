package main

import (
	"context"
	"fmt"
)

func validateCommand() command {
	return command{name: "validate", summary: "check CGP frames and envelopes against the protocol rules", run: func(ctx context.Context, args []string, s stdio) int {
		fmt.Fprintln(s.err, "validate: not yet implemented")
		return exitUsage
	}}
}
