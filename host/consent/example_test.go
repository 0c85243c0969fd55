package consent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
)

// A long-lived host follows the consent journal that `ctxkit consent`
// writes: a grant bound to an endpoint and a name covers only that
// provider, and a revocation holds from the next decision on.
func ExampleWatch() {
	dir, _ := os.MkdirTemp("", "consent")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "consent.ndjson")
	watched, _ := consent.Watch(path) // the server's view
	cli, _ := consent.Open(path)      // ctxkit consent, elsewhere
	_ = cli.Grant(consent.Receipt{ProviderID: "wiki", Scope: frame.ScopeThirdPartyIndex,
		ProviderName: "wiki-search", Endpoint: "https://wiki.example/cgp",
		Grantor: consent.Grantor{Kind: "human", ID: "ada"}})

	info := frame.ProviderInfo{Name: "wiki-search", DataFlow: frame.DataFlow{Reads: true, Egress: true,
		EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}}
	at := func(endpoint string) consent.Subject {
		return consent.Subject{ID: "wiki", Endpoint: endpoint, Name: info.Name}
	}
	fmt.Println(watched.Evaluate(at("https://wiki.example/cgp"), info).Permitted)
	fmt.Println(watched.Evaluate(at("https://other.example/cgp"), info).Reason)
	_, _ = cli.Revoke("wiki", "")
	fmt.Println(watched.Evaluate(at("https://wiki.example/cgp"), info).Permitted)
	// Output:
	// true
	// the receipt for third-party-index does not cover it: it was granted for endpoint "https://wiki.example/cgp" and the provider is reached at "https://other.example/cgp"
	// false
}

// memLog is a consent.Log kept in memory, standing in for a database
// shared by replicas.
type memLog struct{ entries []consent.Entry }

func (l *memLog) Append(_ context.Context, e consent.Entry) error {
	l.entries = append(l.entries, e)
	return nil
}

func (l *memLog) Since(_ context.Context, pos int64, _ bool) ([]consent.Entry, int64, error) {
	return l.entries[pos:], int64(len(l.entries)), nil
}

// Two stores on one log are two replicas: a grant through one permits
// on the other, and a revocation through the other withdraws it on both.
func ExampleOpenLog() {
	log := &memLog{}
	a, _ := consent.OpenLog(log)
	b, _ := consent.OpenLog(log)
	wiki := frame.ProviderInfo{Name: "wiki-search", DataFlow: frame.DataFlow{Egress: true, EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}}
	sub := consent.Subject{ID: "wiki", Name: "wiki-search", Endpoint: "https://wiki.example/cgp"}
	_ = a.Grant(consent.Receipt{ProviderID: "wiki", Scope: frame.ScopeThirdPartyIndex, ProviderName: "wiki-search",
		Endpoint: "https://wiki.example/cgp", Grantor: consent.Grantor{Kind: "human", ID: "ada"}})
	fmt.Println(b.Evaluate(sub, wiki).Permitted)
	_, _ = b.Revoke("wiki", "")
	fmt.Println(a.Evaluate(sub, wiki).Permitted, len(log.entries))
	// Output:
	// true
	// false 2
}
