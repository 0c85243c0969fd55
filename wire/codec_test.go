package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/fixtures"
)

// Every reference vector decodes and re-encodes to identical bytes.
func TestReferenceVectorsRoundTripByteForByte(t *testing.T) {
	lines := fixtures.Lines(fixtures.ReferenceVectors)
	if len(lines) != 13 {
		t.Fatalf("expected 13 reference vectors, got %d", len(lines))
	}
	for i, line := range lines {
		env, err := Unmarshal(line)
		if err != nil {
			t.Fatalf("vector %d: %v", i+1, err)
		}
		if _, ok := env.(*Unknown); ok {
			t.Fatalf("vector %d decoded as unknown", i+1)
		}
		got, err := Marshal(env)
		if err != nil {
			t.Fatalf("vector %d: %v", i+1, err)
		}
		if !bytes.Equal(got, line) {
			t.Errorf("vector %d differs:\n got %s\nwant %s", i+1, got, line)
		}
	}
}

// The stdio session (spaces, reordered members, nulls) decodes envelope by
// envelope into the expected types.
func TestStdioSessionDecodesEnvelopeByEnvelope(t *testing.T) {
	d := NewDecoder(bytes.NewReader(fixtures.File(fixtures.StdioSession)), nil)
	want := []string{typeHandshake, typeHandshakeAck, typeQuery, typeFrames, typeVerify, typeVerified, typeShutdown}
	var got []Envelope
	for {
		env, err := d.Decode()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, env)
	}
	if len(got) != len(want) {
		t.Fatalf("decoded %d envelopes, want %d", len(got), len(want))
	}
	for i, env := range got {
		if env.Type() != want[i] {
			t.Errorf("envelope %d is %s, want %s", i+1, env.Type(), want[i])
		}
	}
	ack := got[1].(*HandshakeAck)
	if ack.Provider.Name != "repo-graph" || !ack.Capabilities.Verify || ack.Capabilities.EmbeddingsFingerprint != "" {
		t.Errorf("handshake_ack decoded wrong: %+v", ack)
	}
	q := got[2].(*Query)
	if q.ID != "q1" || q.Query.MaxTokens != 1024 || len(q.Query.Kinds) != 2 {
		t.Errorf("query decoded wrong: %+v", q)
	}
	fr := got[3].(*Frames)
	if fr.ID != "q1" || len(fr.Result.Frames) != 2 || fr.Result.Frames[1].Score != 0.81 ||
		fr.Result.Frames[0].Provenance[0].Type != frame.ProvenanceFile {
		t.Errorf("frames decoded wrong: %+v", fr)
	}
	ver := got[5].(*Verified)
	if ver.Response.Verdicts[1].Status != StatusStale || ver.Response.Verdicts[1].ReplacementDigest == "" {
		t.Errorf("verified decoded wrong: %+v", ver)
	}
}
