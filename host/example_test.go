package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/wire"
)

// notes is a tiny in-process provider.
type notes struct{}

func (notes) Handshake(ctx context.Context, v string) (*wire.HandshakeAck, error) {
	return &wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion,
		Provider: frame.ProviderInfo{Name: "notes", Version: "1.0.0"}}, nil
}

func (notes) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	c := "Retries use exponential backoff."
	return &wire.Result{Frames: []frame.Frame{{ID: "n1", Kind: frame.KindFact, Title: "retries", Content: c,
		Score: 0.9, TokenCost: uint32(frame.BudgetTokens(c)), CitationLabel: "notes:1"}}}, nil
}

func (notes) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) { return nil, nil }

func ExampleHost_QueryAllBudgeted() {
	h := host.New(nil)
	defer h.Close(context.Background())
	_ = h.AddInProcess("notes", notes{})
	q := &frame.Query{Goal: "how do retries work", MaxFrames: 4, MaxTokens: 500}
	fo := h.QueryAllBudgeted(context.Background(), q, 500)
	for _, o := range fo.Outcomes {
		// The share holds the fences too: the provider is asked for the
		// share less FrameChrome for each of max_frames frames.
		fmt.Println(o.Provider, o.Status, len(o.Frames), "frame(s), share", o.Share,
			"asked max_tokens", o.Query.MaxTokens, "max_frames", o.Query.MaxFrames)
	}
	res := fo.Compose(500, nil)
	fmt.Println(len(res.Audit.Included()), "included")
	// Output:
	// notes frames 1 frame(s), share 500 asked max_tokens 376 max_frames 4
	// 1 included
}

func ExampleNewCredential() {
	c := host.NewCredential("s3cr3t-token")
	fmt.Println(c)
	fmt.Printf("%q %#v\n", c, c)
	// Output:
	// Credential(<redacted>)
	// Credential(<redacted>) Credential(<redacted>)
}

func ExampleVerifyFileProvenance() {
	dir, _ := os.MkdirTemp("", "prov")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "abc.txt")
	_ = os.WriteFile(path, []byte("abc"), 0o600)
	p := frame.Provenance{Type: frame.ProvenanceFile, URI: files.FileURI(path),
		Digest: "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
	fmt.Println(host.VerifyFileProvenance(p, []string{dir}).Status)
	fmt.Println(host.VerifyFileProvenance(p, []string{os.TempDir() + "/elsewhere"}).Status)
	// Output:
	// verified
	// refused
}

// A long-lived host follows the consent journal that `ctxkit consent`
// writes: a grant bound to an endpoint and a name covers only that
// provider, and a revocation holds from the next decision on.
func ExampleWatchConsentStore() {
	dir, _ := os.MkdirTemp("", "consent")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "consent.ndjson")
	watched, _ := host.WatchConsentStore(path) // the server's view
	cli, _ := host.OpenConsentStore(path)      // ctxkit consent, elsewhere
	_ = cli.Grant(host.ConsentReceipt{ProviderID: "wiki", Scope: frame.ScopeThirdPartyIndex,
		ProviderName: "wiki-search", Endpoint: "https://wiki.example/cgp",
		Grantor: host.Grantor{Kind: "human", ID: "ada"}})

	info := frame.ProviderInfo{Name: "wiki-search", DataFlow: frame.DataFlow{Reads: true, Egress: true,
		EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}}
	at := func(endpoint string) host.ConsentSubject {
		return host.ConsentSubject{ID: "wiki", Endpoint: endpoint, Name: info.Name}
	}
	fmt.Println(watched.EvaluateSubject(at("https://wiki.example/cgp"), info).Permitted)
	fmt.Println(watched.EvaluateSubject(at("https://other.example/cgp"), info).Reason)
	_, _ = cli.Revoke("wiki", "")
	fmt.Println(watched.EvaluateSubject(at("https://wiki.example/cgp"), info).Permitted)
	// Output:
	// true
	// the receipt for third-party-index does not cover it: it was granted for endpoint "https://wiki.example/cgp" and the provider is reached at "https://other.example/cgp"
	// false
}

func ExampleFrameChrome() {
	// What the host reserves, per frame, out of a leg's share for the
	// fence of a frame served by provider "files": the fixed fence bytes,
	// the provider id and AttrAllowance bytes of id, kind and label.
	fmt.Println(host.FrameChrome("files"), "budget tokens per frame")
	// Output:
	// 31 budget tokens per frame
}

// memLog is a ConsentLog kept in memory, standing in for a database
// shared by replicas.
type memLog struct{ entries []host.ConsentEntry }

func (l *memLog) Append(_ context.Context, e host.ConsentEntry) error {
	l.entries = append(l.entries, e)
	return nil
}

func (l *memLog) Since(_ context.Context, pos int64, _ bool) ([]host.ConsentEntry, int64, error) {
	return l.entries[pos:], int64(len(l.entries)), nil
}

// Two stores on one log are two replicas: a grant through one permits
// on the other, and a revocation through the other withdraws it on both.
func ExampleOpenConsentLog() {
	log := &memLog{}
	a, _ := host.OpenConsentLog(log)
	b, _ := host.OpenConsentLog(log)
	wiki := frame.ProviderInfo{Name: "wiki-search", DataFlow: frame.DataFlow{Egress: true, EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}}
	sub := host.ConsentSubject{ID: "wiki", Name: "wiki-search", Endpoint: "https://wiki.example/cgp"}
	_ = a.Grant(host.ConsentReceipt{ProviderID: "wiki", Scope: frame.ScopeThirdPartyIndex, ProviderName: "wiki-search",
		Endpoint: "https://wiki.example/cgp", Grantor: host.Grantor{Kind: "human", ID: "ada"}})
	fmt.Println(b.EvaluateSubject(sub, wiki).Permitted)
	_, _ = b.Revoke("wiki", "")
	fmt.Println(a.EvaluateSubject(sub, wiki).Permitted, len(log.entries))
	// Output:
	// true
	// false 2
}

func ExampleScrubError() {
	err := fmt.Errorf("connect: password authentication failed for password %q", "hunter2-long")
	fmt.Println(host.ScrubError(err, "hunter2-long"))
	// Output:
	// connect: password authentication failed for password "Credential(<redacted>)"
}
