package mcpbridge

// This file is the bridge's only use of host/files: chunking and ranking
// documents held in memory with the files provider's own chunker and
// ranking. Re-point it here when host/files grows an in-memory index; with
// files.NewIndex, Index.Add(Document{Path, Content}) and
// Index.Search(goal, limit) []Hit the body of rank becomes:
//
//	ix := files.NewIndex()
//	for i, d := range docs {
//		ix.Add(files.Document{Path: "d" + strconv.Itoa(i) + extOf(d.name), Content: d.content})
//	}
//	for _, h := range ix.Search(goal, 0) {
//		// h.Path names the document ("d<i>.ext"); one hit per path in h.Paths
//		// when equal contents were merged.
//		hits = append(hits, chunkHit{doc: i, start: h.Chunk.StartLine, end: h.Chunk.EndLine,
//			kind: h.Chunk.Kind, heading: h.Chunk.Heading, text: h.Chunk.Text, score: float32(h.Score)})
//	}
//
// and the temporary directory goes away.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/files"
)

// document is one text to rank: name picks the chunker (by extension).
type document struct {
	name    string
	content []byte
}

// chunkHit is one ranked chunk of a document.
type chunkHit struct {
	doc        int // index into the documents given to rank
	start, end int // 1-based lines, inclusive
	kind       frame.Kind
	heading    string
	text       string
	score      float32 // in [0, 1], the best chunk 1
}

// rank cuts docs into chunks and returns the chunks matching goal, best
// first. The files index is built over a private temporary directory that
// holds the documents under neutral names and is removed before rank
// returns.
func rank(ctx context.Context, goal string, docs []document) ([]chunkHit, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "ctxkit-mcpbridge-")
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: rank: %w", err)
	}
	defer os.RemoveAll(dir)
	var total int64
	for i, d := range docs {
		name := "d" + strconv.Itoa(i) + extOf(d.name)
		if err := os.WriteFile(filepath.Join(dir, name), d.content, 0o600); err != nil {
			return nil, fmt.Errorf("mcpbridge: rank: %w", err)
		}
		total += int64(len(d.content))
	}
	ix, err := files.Build(ctx, dir, &files.IndexOptions{})
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: rank: %w", err)
	}
	res, err := files.New(ix).Query(ctx, &frame.Query{Goal: goal, MaxFrames: 1 << 20, MaxTokens: uint32(min(total, 1<<31))})
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: rank: %w", err)
	}
	hits := make([]chunkHit, 0, len(res.Frames))
	for _, f := range res.Frames {
		h, ok := hitOf(&f, len(docs))
		if ok {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

// hitOf maps a files frame ("d<i>.ext#L<a>-<b>") back to its document.
func hitOf(f *frame.Frame, n int) (chunkHit, bool) {
	rel, rng, ok := strings.Cut(f.ID, "#")
	if !ok {
		return chunkHit{}, false
	}
	i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rel, "d"), filepath.Ext(rel)))
	if err != nil || i < 0 || i >= n {
		return chunkHit{}, false
	}
	lr, err := frame.ParseLineRange(rng)
	if err != nil {
		return chunkHit{}, false
	}
	_, heading, _ := strings.Cut(f.Title, " — ")
	return chunkHit{doc: i, start: lr.Start, end: lr.End, kind: f.Kind, heading: heading, text: f.Content, score: f.Score}, true
}

// extOf keeps a name's extension when it is short and plain, so the
// chunker sees Markdown as Markdown and Go as Go.
func extOf(name string) string {
	e := filepath.Ext(name)
	if len(e) < 2 || len(e) > 10 || strings.ContainsAny(e, `/\?#&=% `) {
		return ".txt"
	}
	return strings.ToLower(e)
}
