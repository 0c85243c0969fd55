package server_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/ctxkit/ctxkit/compose"
	"net/http"
	"net/http/httptest"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/client"
)

// The handler mounts in any Go server; the client calls it.
func ExampleNew() {
	mux := http.NewServeMux()
	mux.Handle("/ctxkit/", http.StripPrefix("/ctxkit", server.New(&server.Options{MaxFrames: 100})))
	ts := httptest.NewServer(mux)
	defer ts.Close()

	c, err := client.New(ts.URL+"/ctxkit", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	content := "Retry at most 3 times."
	budget := 100
	res, err := c.Compose(context.Background(), &server.ComposeRequest{
		Budget: &budget,
		Offers: []compose.Offer{{Provider: "docs", Frame: &frame.Frame{
			ID: "retry", Kind: frame.KindDoc, Title: "Retry policy", Content: content,
			Score: 0.9, TokenCost: uint32(frame.BudgetTokens(content)), CitationLabel: "retry.md L1",
		}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	e := res.Audit.Entries[0]
	fmt.Println(e.Frame.Frame, e.Disposition, res.Audit.TokensUsed <= budget)
	// Output: retry included true
}

// Errors carry the HTTP status, a stable code and, for protocol
// violations, the rule.
func ExampleError() {
	ts := httptest.NewServer(server.New(nil))
	defer ts.Close()
	c, _ := client.New(ts.URL, nil)
	budget := 10
	_, err := c.Compose(context.Background(), &server.ComposeRequest{
		Budget: &budget,
		Offers: []compose.Offer{{Provider: "docs", Frame: &frame.Frame{
			ID: "x", Kind: frame.KindDoc, Title: "X", Content: "abc", Score: 0.5, TokenCost: 5, CitationLabel: "x",
		}}},
	})
	var e *server.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.Rule, e.Field)
	}
	// Output: 422 rule_violation B3 offers[0].frame.token_cost
}
