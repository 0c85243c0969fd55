package mcpbridge

// This file is the bridge's only use of host/files: the resources it read
// are chunked and ranked by the files provider's own chunker and ranking,
// through the in-memory index files.NewIndex, so MCP evidence and local
// files are cut and scored by one set of rules.

import (
	"context"
	"fmt"
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
// first. Documents go in under neutral names ("d<i>.ext") so that only the
// extension, which picks the chunker, comes from the server; equal contents
// are indexed once and reported for every document holding them.
func rank(ctx context.Context, goal string, docs []document) ([]chunkHit, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	ix := files.NewIndex()
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mcpbridge: rank: %w", err)
		}
		ix.Add(files.Document{Path: docName(i, d.name), Content: d.content})
	}
	var hits []chunkHit
	for _, h := range ix.Search(goal, 0) {
		for _, p := range h.Paths {
			i, ok := docIndex(p, len(docs))
			if !ok {
				continue
			}
			c := h.Chunk
			hits = append(hits, chunkHit{doc: i, start: c.StartLine, end: c.EndLine,
				kind: c.Kind, heading: c.Heading, text: c.Text, score: float32(h.Score)})
		}
	}
	return hits, nil
}

// docName is the neutral name document i is indexed under.
func docName(i int, name string) string { return "d" + strconv.Itoa(i) + extOf(name) }

// docIndex maps a neutral name back to its document's index.
func docIndex(name string, n int) (int, bool) {
	i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, "d"), filepath.Ext(name)))
	if err != nil || i < 0 || i >= n {
		return 0, false
	}
	return i, true
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
