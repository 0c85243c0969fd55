package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// Name and Version identify the provider in its handshake_ack.
const (
	Name    = "ctxkit-files"
	Version = "0.1.0"
)

// Provider serves frames from an Index: each frame is a run of whole lines
// of one file, ranked against the query's goal and query_text by BM25. It
// implements the provider side of CGP (host.Server) and declares the
// local-only egress scope: it reads files and sends nothing anywhere.
type Provider struct {
	ix *Index
}

// New returns a provider over ix.
func New(ix *Index) *Provider { return &Provider{ix: ix} }

// Index returns the provider's index.
func (p *Provider) Index() *Index { return p.ix }

// Handshake acknowledges with the provider's info and capabilities: kinds
// doc and snippet, correlation, verify, full representation only.
func (p *Provider) Handshake(ctx context.Context, hostVersion string) (*wire.HandshakeAck, error) {
	return &wire.HandshakeAck{
		ProtocolVersion: wire.ProtocolVersion,
		Provider: frame.ProviderInfo{
			Name:    Name,
			Version: Version,
			DataFlow: frame.DataFlow{
				Reads:        true,
				EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly},
			},
		},
		Capabilities: frame.Capabilities{
			Query:       frame.QueryCapabilities{Kinds: []frame.Kind{frame.KindDoc, frame.KindSnippet}},
			Correlation: true,
			Verify:      true,
		},
	}, nil
}

// timestamp formats t as a protocol timestamp (UTC, seconds).
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// FileURI returns the file:// URI of an absolute path.
func FileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: abs}).String()
}

// frameID names a chunk: its slash path, then #L<a>-<b>.
func frameID(rel string, a, b int) string {
	return rel + "#L" + strconv.Itoa(a) + "-" + strconv.Itoa(b)
}

func parseFrameID(id string) (rel string, a, b int, ok bool) {
	rel, rng, found := strings.Cut(id, "#L")
	if !found {
		return "", 0, 0, false
	}
	as, bs, found := strings.Cut(rng, "-")
	if !found {
		return "", 0, 0, false
	}
	a, err1 := strconv.Atoi(as)
	b, err2 := strconv.Atoi(bs)
	if err1 != nil || err2 != nil || a < 1 || b < a || rel != path.Clean(rel) || strings.HasPrefix(rel, "../") || rel == ".." || strings.HasPrefix(rel, "/") {
		return "", 0, 0, false
	}
	return rel, a, b, true
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// readRange returns lines a..b (1-based, inclusive, LF kept) of file fi as it
// is on disk now, and the file's modification time. ok is false when the
// file is gone, no longer a regular file, or shorter than line a.
func (ix *Index) readRange(fi uint32, a, b int) (content []byte, mod time.Time, ok bool) {
	f := ix.files[fi]
	st, err := os.Lstat(f.abs)
	if err != nil || !st.Mode().IsRegular() {
		return nil, time.Time{}, false
	}
	data, err := os.ReadFile(f.abs)
	if err != nil {
		return nil, time.Time{}, false
	}
	lines := splitLines(data)
	if a > len(lines) {
		return nil, time.Time{}, false
	}
	if b > len(lines) {
		b = len(lines)
	}
	start := lines[a-1].off
	end := lines[b-1].off + lines[b-1].len
	return data[start:end], st.ModTime(), true
}

// anchorFile resolves a query anchor (a file:// URI of an indexed file, or
// its path relative to the root) to a file index.
func (ix *Index) anchorFile(anchor string) (uint32, bool) {
	if u, err := url.Parse(anchor); err == nil && u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return 0, false
		}
		if rel, ok := strings.CutPrefix(u.Path, ix.root+"/"); ok {
			fi, found := ix.byPath[rel]
			return fi, found
		}
		return 0, false
	}
	fi, found := ix.byPath[strings.TrimPrefix(path.Clean(anchor), "./")]
	return fi, found
}

// checkQuery refuses a query this provider cannot serve, with the wire
// error to send, and reads its as_of pin: pinned when the query carries
// one (an as_of sent as "" is a pin that is no timestamp, F4), and the
// instant, a leap second included.
func checkQuery(q *frame.Query) (pinned bool, asOf time.Time, err error) {
	if strings.TrimSpace(q.Goal) == "" {
		return false, asOf, &wire.Error{Code: wire.CodeBadRequest, Message: "query.goal is blank"}
	}
	if q.MaxTokens == 0 || q.MaxFrames == 0 {
		return false, asOf, &wire.Error{Code: wire.CodeBadRequest, Message: "query.max_tokens and query.max_frames must be positive"}
	}
	if len(q.RepresentationPreferences) > 0 && !slices.ContainsFunc(q.RepresentationPreferences,
		func(r frame.Representation) bool { return r.Effective() == frame.RepresentationFull }) {
		return false, asOf, &wire.Error{Code: wire.CodeUnsupportedRepresentation, Message: "this provider serves the full representation only"}
	}
	if len(q.Embedding) > 0 {
		return false, asOf, &wire.Error{Code: wire.CodeBadRequest, Message: "this provider declares no embeddings fingerprint; do not send an embedding (E1)"}
	}
	if !q.Has(frame.MemberAsOf) {
		return false, asOf, nil
	}
	t, err := frame.ParseTimestamp(q.AsOf)
	if err != nil {
		return false, asOf, &wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf("query.as_of %q is not a protocol timestamp (F4): %v", q.AsOf, err)}
	}
	return true, t.Time(), nil
}

// Query ranks the index's chunks against goal and query_text and returns the
// best within max_frames and max_tokens (B1, B4; each token_cost is exactly
// the canonical cost of the content, B3). A chunk of an anchor file ranks
// first. Files modified after as_of are left out. Chunks that did not fit
// are counted in dropped_estimate and set truncated; nothing is cut short.
func (p *Provider) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	pinned, asOf, err := checkQuery(q)
	if err != nil {
		return nil, err
	}
	wantDoc, wantSnippet := q.WantsKind(frame.KindDoc), q.WantsKind(frame.KindSnippet)
	res := &wire.Result{Frames: []frame.Frame{}}
	if !wantDoc && !wantSnippet {
		return res, nil
	}
	ix := p.ix
	hits := ix.search(q.Goal + " " + q.QueryText)
	top := 0.0
	if len(hits) > 0 {
		top = hits[0].score
	}
	// Anchored files: their best chunk (or first chunk) goes first.
	type cand struct {
		chunk uint32
		score float32
	}
	var cands []cand
	placed := make(map[uint32]bool)
	for _, a := range q.Anchors {
		fi, ok := ix.anchorFile(a)
		if !ok {
			continue
		}
		best, found := uint32(0), false
		for _, h := range hits {
			if ix.chunks[h.chunk].file == fi {
				best, found = h.chunk, true
				break
			}
		}
		if !found {
			for ci := range ix.chunks {
				if ix.chunks[ci].file == fi {
					best, found = uint32(ci), true
					break
				}
			}
		}
		if found && !placed[best] {
			placed[best] = true
			cands = append(cands, cand{best, 1})
		}
	}
	for _, h := range hits {
		if placed[h.chunk] {
			continue
		}
		s := float32(h.score / top)
		if s > 1 || s != s {
			s = 1
		}
		if s < 0 {
			s = 0
		}
		cands = append(cands, cand{h.chunk, s})
	}
	// Walk the ranking. Each candidate's cost is first estimated from the
	// index (its byte length at index time) so that ones that cannot fit are
	// counted without touching the disk; a candidate that may fit is read
	// back and charged its exact canonical cost.
	var used uint64
	dropped := uint32(0)
	for i, c := range cands {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, &wire.Error{Code: wire.CodeUnavailable, Message: "query canceled"}
			}
		}
		ch := ix.chunks[c.chunk]
		fe := ix.files[ch.file]
		if (fe.doc && !wantDoc) || (!fe.doc && !wantSnippet) {
			continue
		}
		if pinned && fe.modTime.After(asOf) {
			continue
		}
		if len(res.Frames) >= int(q.MaxFrames) || used+uint64((ch.end-ch.start+3)/4) > uint64(q.MaxTokens)+64 {
			dropped++
			continue
		}
		content, mod, ok := ix.readRange(ch.file, ch.startLine, ch.endLine)
		if !ok || (pinned && mod.After(asOf)) {
			continue
		}
		cost := frame.BudgetTokensBytes(content)
		if used+uint64(cost) > uint64(q.MaxTokens) {
			dropped++
			continue
		}
		used += uint64(cost)
		res.Frames = append(res.Frames, p.makeFrame(fe, ch, content, mod, c.score))
	}
	if dropped > 0 {
		res.Truncated = true
		res.DroppedEstimate = &dropped
	}
	return res, nil
}

func (p *Provider) makeFrame(fe fileEntry, ch chunk, content []byte, mod time.Time, score float32) frame.Frame {
	end := ch.startLine + len(splitLines(content)) - 1
	d := digest(content)
	kind := frame.KindSnippet
	if fe.doc {
		kind = frame.KindDoc
	}
	title := p.ix.label + fe.rel
	if ch.heading != "" {
		title += " — " + ch.heading
	}
	rng := "L" + strconv.Itoa(ch.startLine) + "-" + strconv.Itoa(end)
	uri := FileURI(fe.abs)
	return frame.Frame{
		ID:            frameID(fe.rel, ch.startLine, end),
		Kind:          kind,
		Title:         title,
		Content:       string(content),
		ContentDigest: d,
		URI:           uri,
		Score:         score,
		TokenCost:     uint32(frame.BudgetTokensBytes(content)),
		ValidFrom:     timestamp(mod),
		Provenance:    []frame.Provenance{{Type: frame.ProvenanceFile, URI: uri, Range: rng, Digest: d}},
		CitationLabel: p.ix.label + fe.rel + ":" + strconv.Itoa(ch.startLine) + "-" + strconv.Itoa(end),
	}
}

// Verify answers for each identity: gone when the frame id names no indexed
// file or lines that no longer exist; unknown when no digest was sent; valid
// when the lines' current digest equals the one held; stale, with the
// current digest as replacement, otherwise.
func (p *Provider) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) {
	out := make([]wire.Verdict, 0, len(ids))
	for _, id := range ids {
		v := wire.Verdict{Frame: id}
		rel, a, b, ok := parseFrameID(id.Frame)
		fi, known := p.ix.byPath[rel]
		switch {
		case !ok || !known:
			v.Status = wire.StatusGone
		default:
			content, _, ok := p.ix.readRange(fi, a, b)
			switch {
			case !ok:
				v.Status = wire.StatusGone
			case id.Digest == "":
				v.Status = wire.StatusUnknown
			case digest(content) == id.Digest:
				v.Status = wire.StatusValid
			default:
				v.Status = wire.StatusStale
				v.ReplacementDigest = digest(content)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// String describes the provider for logs.
func (p *Provider) String() string {
	return fmt.Sprintf("%s %s over %s (%d files, %d chunks)", Name, Version, p.ix.root, len(p.ix.files), len(p.ix.chunks))
}
