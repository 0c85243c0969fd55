package host_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
)

// A stdio command that does not exist is one failed leg of the fan-out,
// with a typed reason, while the other providers answer.
func ExampleHost_AddUnstarted() {
	h := host.New(nil)
	defer h.Close(context.Background())
	_ = h.AddInProcess("notes", notes{})
	if err := h.AddStdio("tickets", "/no/such/tickets-provider", nil, nil); errors.Is(err, host.ErrNotStarted) {
		_ = h.AddUnstarted("tickets", err)
	}
	fo := h.QueryAll(context.Background(), &frame.Query{Goal: "how do retries work", MaxFrames: 4, MaxTokens: 500})
	for _, o := range fo.Outcomes {
		fmt.Println(o.Provider, o.Status, len(o.Frames), "frame(s)")
	}
	// Output:
	// notes frames 1 frame(s)
	// tickets not_started 0 frame(s)
}
