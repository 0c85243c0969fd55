package files

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// providerName and providerVersion identify the provider in its handshake_ack.
const (
	providerName    = "ctxkit-files"
	providerVersion = "0.1.0"
)

// Provider serves frames from one or more Indexes (several roots are one
// provider with one share of the budget): each frame is a chunk of a file,
// ranked against the query's goal and query_text. It implements the
// provider side of CGP (host.Server) and declares the local-only egress
// scope: it reads files and sends nothing anywhere.
type Provider struct {
	// mu is held to read roots while answering, and to replace an index
	// found corrupt while answering.
	mu     sync.RWMutex
	roots  []*Index
	prefix []string // per root, before frame ids: "" for a single root
}

// New returns a provider over the indexes of one or more roots. With
// several, frame ids and titles begin with the root's label (or its base
// name when it has none), so every path names its root.
func New(ixs ...*Index) *Provider {
	p := &Provider{roots: ixs, prefix: make([]string, len(ixs))}
	if len(ixs) > 1 {
		used := map[string]bool{}
		for i, ix := range ixs {
			pre := ix.label
			if pre == "" {
				pre = filepath.Base(ix.root) + "/"
			}
			for k := 2; used[pre]; k++ {
				pre = strings.TrimSuffix(pre, "/") + "-" + strconv.Itoa(k) + "/"
			}
			used[pre] = true
			p.prefix[i] = pre
		}
	}
	return p
}

// Indexes returns the provider's indexes, one per root. A query that finds
// an index corrupt replaces it (see Query), so call Indexes again after a
// query; an index replaced so stays usable (it answers from its old store)
// and is released once no longer referenced.
func (p *Provider) Indexes() []*Index {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Clone(p.roots)
}

// stats sums the indexes' statistics, the state the least fresh of them;
// the caller holds p.mu.
func (p *Provider) stats() Stats {
	var st Stats
	rank := map[State]int{StateFresh: 0, StateMemory: 1, StateRefreshed: 2, StateRebuilt: 3}
	for i, ix := range p.roots {
		s := ix.Stats()
		if i == 0 || rank[s.State] > rank[st.State] {
			st.State = s.State
		}
		st.Elapsed = max(st.Elapsed, s.Elapsed)
		st.Files += s.Files
		st.Contents += s.Contents
		st.Chunks += s.Chunks
		st.Bytes += s.Bytes
		st.Reindexed += s.Reindexed
		st.Skipped = addSkipped(st.Skipped, s.Skipped)
	}
	return st
}

func addSkipped(a, b Skipped) Skipped {
	return Skipped{a.Binary + b.Binary, a.TooLarge + b.TooLarge, a.Unreadable + b.Unreadable, a.Symlinks + b.Symlinks,
		a.Ignored + b.Ignored, a.Excluded + b.Excluded, a.Hidden + b.Hidden, a.DefaultDirs + b.DefaultDirs, a.Duplicates + b.Duplicates}
}

// Handshake acknowledges with the provider's info and capabilities: kinds
// doc and snippet, correlation, verify, full representation only.
func (p *Provider) Handshake(ctx context.Context, hostVersion string) (*wire.HandshakeAck, error) {
	return &wire.HandshakeAck{
		ProtocolVersion: wire.ProtocolVersion,
		Provider: frame.ProviderInfo{
			Name:    providerName,
			Version: providerVersion,
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

// anchorFile resolves a query anchor (a file:// URI of an indexed file, or
// its path as the provider names it) to a root and path.
func (p *Provider) anchorFile(anchor string) (root int, rel string, ok bool) {
	if u, err := url.Parse(anchor); err == nil && u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return 0, "", false
		}
		for i, ix := range p.roots {
			if r, found := strings.CutPrefix(u.Path, ix.root+"/"); found {
				if _, live := ix.live[r]; live {
					return i, r, true
				}
			}
		}
		return 0, "", false
	}
	return p.resolve(strings.TrimPrefix(path.Clean(anchor), "./"))
}

// resolve maps a provider path (root prefix, then the path in the root) to
// an indexed file.
func (p *Provider) resolve(name string) (root int, rel string, ok bool) {
	for i, ix := range p.roots {
		r, found := strings.CutPrefix(name, p.prefix[i])
		if !found {
			continue
		}
		if _, live := ix.live[r]; live {
			return i, r, true
		}
	}
	return 0, "", false
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
// An answer is never made from a stored index found corrupt while
// answering: the store is opened again, checked whole (so rebuilt, with a
// message to its Log), and the query answered from the new index.
func (p *Provider) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	// A large stored index is checked in part when it is opened and the
	// rest as queries read it (see checkSegment).
	for attempt := 0; ; attempt++ {
		p.mu.RLock()
		res, err := p.query(ctx, q)
		bad := p.corruptRoots()
		p.mu.RUnlock()
		if err != nil || len(bad) == 0 {
			return res, err
		}
		if attempt > 0 {
			return nil, &wire.Error{Code: wire.CodeUnavailable, Message: "the index is corrupt again after it was rebuilt"}
		}
		if err := p.reopen(ctx, bad); err != nil {
			return nil, &wire.Error{Code: wire.CodeUnavailable, Message: err.Error()}
		}
	}
}

// corruptRoots returns the roots whose index failed a check; the caller
// holds p.mu.
func (p *Provider) corruptRoots() []int {
	var bad []int
	for i, ix := range p.roots {
		if ix.corrupt() != nil {
			bad = append(bad, i)
		}
	}
	return bad
}

// reopen replaces the indexes of the roots found corrupt, unless another
// query has replaced them already.
func (p *Provider) reopen(ctx context.Context, roots []int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ri := range roots {
		old := p.roots[ri]
		why := old.corrupt()
		if why == nil {
			continue
		}
		ix, err := old.reopen(ctx, why)
		if err != nil {
			return err
		}
		p.roots[ri] = ix
		old.retire()
	}
	return nil
}

func (p *Provider) query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	pinned, asOf, err := checkQuery(q)
	if err != nil {
		return nil, err
	}
	wantDoc, wantSnippet := q.WantsKind(frame.KindDoc), q.WantsKind(frame.KindSnippet)
	res := &wire.Result{Frames: []frame.Frame{}}
	if !wantDoc && !wantSnippet {
		return res, nil
	}
	// Chunks far weaker than the best bear little on the goal: rank holds
	// them back (counted) rather than offer them to fill the budget.
	cands, weak := p.rank(q)
	// Walk the ranking. Each candidate's cost is first estimated from the
	// index (its byte length at index time) so that ones that cannot fit are
	// counted without touching the disk; a candidate that may fit is read
	// back and charged its exact canonical cost.
	var used uint64
	held := HeldBack{Weak: weak}
	var kept []keptChunk
	for i, c := range cands {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, &wire.Error{Code: wire.CodeUnavailable, Message: "query canceled"}
			}
		}
		ix := p.roots[c.root]
		seg := ix.segs[c.seg]
		ch := seg.chunk(c.chunk)
		ct := seg.contents[ch.content]
		if (ct.doc && !wantDoc) || (!ct.doc && !wantSnippet) {
			continue
		}
		paths := ix.pathsOf(c.seg, ch.content)
		if len(paths) == 0 {
			continue
		}
		heading := seg.str(ch.headOff, ch.headN)
		name := headingKey(heading)
		if nearCopy(kept, c, ch.content, name) {
			held.Copies++ // a sibling file's copy of a chunk already offered
			continue
		}
		if pinned && time.Unix(0, modTimeOf(ct, paths[0])).After(asOf) {
			continue
		}
		if len(res.Frames) >= int(q.MaxFrames) || used+uint64((ch.end-ch.start+3)/4) > uint64(q.MaxTokens)+64 {
			held.OverLimits++
			continue
		}
		content, end, mod, ok := ix.readChunk(paths[0], ct.html, int(ch.startLine), int(ch.endLine))
		if !ok || (pinned && mod.After(asOf)) {
			continue
		}
		cost := frame.BudgetTokens(content)
		if used+uint64(cost) > uint64(q.MaxTokens) {
			held.OverLimits++
			continue
		}
		used += uint64(cost)
		kept = append(kept, keptChunk{c, ch.content, name})
		res.Frames = append(res.Frames, p.makeFrame(c.root, paths, ct.doc, heading, int(ch.startLine), end, content, mod, c.score))
	}
	if dropped := uint32(held.Weak + held.Copies + held.OverLimits); dropped > 0 {
		res.Truncated = true
		res.DroppedEstimate = &dropped
	}
	res.Diagnostics = p.diagnostics(held)
	return res, nil
}

// Diagnostics is the files provider's account of one answer, sent as the
// result's ctxkit:diagnostics member (docs/protocol.md, U3): the index it
// answered from, with the files left out of it by reason, and the chunks
// it held back, by reason.
type Diagnostics struct {
	Index    IndexSummary `json:"index"`
	HeldBack HeldBack     `json:"held_back"`
}

// IndexSummary is what the provider's indexes hold, summed over roots.
type IndexSummary struct {
	State    State   `json:"state"`    // the least fresh of the roots' states
	Roots    int     `json:"roots"`    // indexed root directories
	Files    int     `json:"files"`    // indexed paths
	Contents int     `json:"contents"` // distinct contents among them
	Chunks   int     `json:"chunks"`   // ranked chunks
	Bytes    int64   `json:"bytes"`    // bytes of text indexed
	Skipped  Skipped `json:"skipped"`  // files left out or folded into another, by reason
}

// HeldBack counts the matching chunks a query's answer left out, by reason.
type HeldBack struct {
	Weak       int `json:"weak"`        // scored below relativeFloor of the best
	Copies     int `json:"copies"`      // a sibling file's copy of a chunk offered (see nearCopy)
	OverLimits int `json:"over_limits"` // did not fit max_tokens or max_frames
}

func (p *Provider) diagnostics(held HeldBack) []byte {
	st := p.stats()
	d := Diagnostics{Index: IndexSummary{State: st.State, Roots: len(p.roots), Files: st.Files, Contents: st.Contents,
		Chunks: st.Chunks, Bytes: st.Bytes, Skipped: st.Skipped}, HeldBack: held}
	b, err := json.Marshal(d)
	if err != nil {
		return nil // plain structs of numbers and strings: cannot fail
	}
	return b
}

// keptChunk is a chunk a query's answer holds, for nearCopy.
type keptChunk struct {
	cand
	content uint32
	name    string // its heading's headingKey
}

// headingKey is a heading without its spacing, the name nearCopy compares.
func headingKey(heading string) string { return strings.Join(strings.Fields(heading), "") }

// nearCopy reports a chunk that repeats one already kept from another
// file: the same declaration or section name (spacing aside) scoring
// within 3% of it, as platform variants of one file do (gcc_linux.c,
// gcc_darwin.c...). Offering every copy would spend the budget on one
// answer.
//
// name is the chunk's headingKey; each kept chunk's is computed once, when
// it is kept, not again for every later candidate.
func nearCopy(kept []keptChunk, c cand, content uint32, name string) bool {
	if name == "" {
		return false
	}
	for _, k := range kept {
		if k.root == c.root && k.seg == c.seg && k.content == content {
			continue // parts of one file's long section share its heading
		}
		if k.name == name && c.score >= k.score*0.97 && c.score <= k.score*1.03 {
			return true
		}
	}
	return false
}

// relativeFloor is the share of the best chunk's score below which a chunk
// is not offered.
const relativeFloor = 0.4

// cand is a ranked chunk of one root.
type cand struct {
	root       int
	seg, chunk uint32
	score      float32
}

// rank orders the chunks of every root against the query: the best chunk
// of each anchored file first (score 1), then the rest by score, down to
// relativeFloor of the best; it returns how many weaker ones it left out.
// Only the chunks kept are sorted, so a query's cost does not grow with
// the number of chunks that share one common word with it.
func (p *Provider) rank(q *frame.Query) (out []cand, weak int) {
	var all []cand
	best := float32(0)
	for ri, refs := range searchAll(p.roots, q.Goal+" "+q.QueryText) {
		for _, r := range refs {
			all = append(all, cand{ri, r.seg, r.chunk, float32(r.score)})
			best = max(best, float32(r.score))
		}
	}
	placed := map[cand]bool{}
	for _, a := range q.Anchors {
		if c, ok := p.anchorChunk(a, all); ok && !placed[cand{c.root, c.seg, c.chunk, 0}] {
			placed[cand{c.root, c.seg, c.chunk, 0}] = true
			c.score = 1
			out = append(out, c)
		}
	}
	anchored := len(out)
	floor := best * relativeFloor
	for _, c := range all {
		switch {
		case placed[cand{c.root, c.seg, c.chunk, 0}]:
		case c.score < floor:
			weak++
		default:
			out = append(out, c)
		}
	}
	sortCands(out[anchored:])
	if p.demoteRepeats(out[anchored:]) {
		sortCands(out[anchored:])
	}
	return out, weak
}

// sortCands orders candidates best first; ties go to root, segment, then
// chunk order.
func sortCands(cs []cand) {
	slices.SortFunc(cs, func(a, b cand) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		if a.root != b.root {
			return cmp.Compare(a.root, b.root)
		}
		if a.seg != b.seg {
			return cmp.Compare(a.seg, b.seg)
		}
		return cmp.Compare(a.chunk, b.chunk)
	})
}

// repeatBy scales the score of a chunk whose section (same file, same
// heading or declaration) already has a better-ranked chunk: another
// section must match 10% less well to rank below it. repeatScan is how
// many of the best candidates are looked at: far more than an answer holds.
const (
	repeatBy   = 0.9
	repeatScan = 1024
)

// demoteRepeats lowers the later chunks of a section that a better chunk
// of it already represents (a long doc comment or document section split
// in parts), so that the budget goes to more distinct answers before a
// second part of the same one; it reports whether it changed a score.
// cs must be sorted best first.
func (p *Provider) demoteRepeats(cs []cand) bool {
	type section struct {
		root    int
		seg, ct uint32
		heading uint64 // FNV-1a of the heading: a collision only demotes a chunk
	}
	seen := make(map[section]bool, min(len(cs), repeatScan))
	changed := false
	for i := range cs[:min(len(cs), repeatScan)] {
		c := &cs[i]
		s := p.roots[c.root].segs[c.seg]
		ch := s.chunk(c.chunk)
		if ch.headN == 0 {
			continue // no section name to tell parts of one section apart
		}
		h := uint64(14695981039346656037)
		for _, b := range s.strBytes(ch.headOff, ch.headN) {
			h = (h ^ uint64(b)) * 1099511628211
		}
		k := section{c.root, c.seg, ch.content, h}
		if seen[k] {
			c.score *= repeatBy
			changed = true
		}
		seen[k] = true
	}
	return changed
}

// anchorChunk returns the best-scoring chunk of an anchored file, or its
// first chunk when none matches the query.
func (p *Provider) anchorChunk(anchor string, all []cand) (cand, bool) {
	ri, rel, ok := p.anchorFile(anchor)
	if !ok {
		return cand{}, false
	}
	ref := p.roots[ri].live[rel]
	best, found := cand{}, false
	for _, c := range all {
		if c.root == ri && c.seg == ref.seg && p.roots[ri].segs[c.seg].chunk(c.chunk).content == ref.content && (!found || c.score > best.score) {
			best, found = c, true
		}
	}
	if found {
		return best, true
	}
	ct := p.roots[ri].segs[ref.seg].contents[ref.content]
	if ct.nChunks == 0 {
		return cand{}, false
	}
	return cand{ri, ref.seg, ct.firstChunk, 0}, true
}

// modTimeOf returns the stored modification time of a content's path.
func modTimeOf(c content, rel string) int64 {
	for _, pe := range c.paths {
		if pe.rel == rel {
			return pe.modTime
		}
	}
	return 0
}

func (p *Provider) makeFrame(root int, paths []string, doc bool, heading string, start, end int, content []byte, mod time.Time, score float32) frame.Frame {
	ix := p.roots[root]
	d := digest(content)
	kind := frame.KindSnippet
	if doc {
		kind = frame.KindDoc
	}
	shown := ix.label
	if p.prefix[root] != "" {
		shown = p.prefix[root]
	}
	rel := paths[0]
	title := shown + rel
	if heading != "" {
		title += " — " + heading
	}
	rng := "L" + strconv.Itoa(start) + "-" + strconv.Itoa(end)
	uri := FileURI(filepath.Join(ix.root, filepath.FromSlash(rel)))
	prov := make([]frame.Provenance, 0, len(paths))
	for _, other := range paths {
		prov = append(prov, frame.Provenance{Type: frame.ProvenanceFile, URI: FileURI(filepath.Join(ix.root, filepath.FromSlash(other))), Range: rng, Digest: d})
	}
	return frame.Frame{
		ID:            frameID(p.prefix[root]+rel, start, end),
		Kind:          kind,
		Title:         title,
		Content:       string(content),
		ContentDigest: d,
		URI:           uri,
		Score:         score,
		TokenCost:     uint32(frame.BudgetTokens(content)),
		ValidFrom:     timestamp(mod),
		Provenance:    prov,
		CitationLabel: shown + rel + ":" + strconv.Itoa(start) + "-" + strconv.Itoa(end),
	}
}

// Verify answers for each identity: gone when the frame id names no indexed
// file or lines that no longer exist; unknown when no digest was sent; valid
// when the lines' current digest equals the one held; stale, with the
// current digest as replacement, otherwise.
func (p *Provider) Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]wire.Verdict, 0, len(ids))
	for _, id := range ids {
		v := wire.Verdict{Frame: id}
		name, a, b, ok := parseFrameID(id.Frame)
		ri, rel, known := p.resolve(name)
		switch {
		case !ok || !known:
			v.Status = wire.StatusGone
		default:
			ix := p.roots[ri]
			ref := ix.live[rel]
			content, _, _, ok := ix.readChunk(rel, ix.segs[ref.seg].contents[ref.content].html, a, b)
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

// String describes the provider for logs: roots, counts and what was
// skipped.
func (p *Provider) String() string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	st := p.stats()
	roots := make([]string, len(p.roots))
	for i, ix := range p.roots {
		roots[i] = ix.root
	}
	sk := st.Skipped
	return fmt.Sprintf("%s %s over %s (%d files, %d chunks; skipped %d binary, %d too large, %d unreadable, %d symlinks, %d ignored, %d excluded, %d hidden, %d default dirs; %d duplicates)",
		providerName, providerVersion, strings.Join(roots, ", "), st.Files, st.Chunks, sk.Binary, sk.TooLarge, sk.Unreadable, sk.Symlinks, sk.Ignored, sk.Excluded, sk.Hidden, sk.DefaultDirs, sk.Duplicates)
}
