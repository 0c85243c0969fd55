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

func ExampleFrameChrome() {
	// What the host reserves, per frame, out of a leg's share for the
	// fence of a frame served by provider "files": the fixed fence bytes,
	// the provider id and attrAllowance bytes of id, kind and label.
	fmt.Println(host.FrameChrome("files"), "budget tokens per frame")
	// Output:
	// 31 budget tokens per frame
}

func ExampleScrubError() {
	err := fmt.Errorf("connect: password authentication failed for password %q", "hunter2-long")
	fmt.Println(host.ScrubError(err, "hunter2-long"))
	// Output:
	// connect: password authentication failed for password "Credential(<redacted>)"
}
