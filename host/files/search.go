package files

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/ctxkit/ctxkit/frame"
)

// BM25F parameters. Each field's term frequency is normalised by its own
// length and weighted before one saturation, so a term in a heading or a
// declaration name counts for more than one in the body, and a term in the
// path helps every chunk of the file without swamping a short chunk.
const (
	bm25K1      = 1.2
	bodyB       = 0.75
	headB       = 0.5
	bodyWeight  = 1.0
	headWeight  = 3.0
	pathWeight  = 0.8
	generatedBy = 0.5 // generated files rank lower, not out
	testBy      = 0.6 // so do tests: they use an API rather than explain it
	dataBy      = 0.6 // and data files (JSON, YAML, CSV...): they hold values, not explanations
	internalBy  = 0.6 // and code behind the public interface (unexported, internal/)
	// and Go files no default build compiles (a GOEXPERIMENT's package, a
	// generator): a question is about the Go that builds by default.
	offByDefaultBy = 0.6
	// and declarations marked deprecated: their doc names what replaced
	// them, which is what an engineer asking wants.
	deprecatedBy = 0.6

	// fileShare is the weight of file-level evidence in a chunk's score:
	// (1 - fileShare) × the chunk's own score + fileShare × the sum of its
	// file's fileTop best chunk scores over the best file's sum. A chunk in
	// a file that matches the query in several places is more likely to be
	// the answer than an equal chunk in a file that matches once (passage
	// retrieval's document evidence).
	fileShare = 0.1
	fileTop   = 3
)

// packageBy is the path field's term frequency for a query term that names
// the file's directory (its package: "tar" for archive/tar/writer.go), as
// much as a term found twice in the path; other path terms count as often
// as they occur, at most 2. "tar" in a question then favours archive/tar
// over a file that mentions tar in a longer path.
const packageBy = 2.0

// inPackageName reports whether t is a term of the name of the directory
// holding the content's first path.
func inPackageName(tk *tokenizer, ct content, t []byte) bool {
	if len(ct.paths) == 0 {
		return false
	}
	dir := path.Base(path.Dir(ct.paths[0].rel))
	found := false
	tk.each([]byte(dir), func(d []byte) { found = found || bytes.Equal(d, t) })
	return found
}

// Document is one text for an Index: Path names it (its extension picks
// the chunker and the kind) and Content is its text, UTF-8.
type Document struct {
	Path    string
	Content []byte
}

// Hit is a ranked chunk.
type Hit struct {
	Path  string   // the document's path (for a files index, relative to its root)
	Paths []string // every path holding the same content, Path first
	Chunk Chunk
	Score float64 // in [0, 1]: the share of the query's weight the chunk matches, saturated, mixed with its file's (fileShare)
}

// Index is a ranked index over document chunks: BM25F with body, heading
// (or declaration name) and path fields, English stemming and stop words,
// identifiers split and kept whole, the query expanded with a programming
// thesaurus (thesaurus.txt). NewIndex makes one for documents held in
// memory; Build and Open make one over a directory, kept on disk.
//
// An Index is safe for concurrent Search once built; Add must not run
// concurrently with other methods.
type Index struct {
	root  string // absolute root for a files index, "" for documents
	label string // prefix shown in titles and citation labels
	segs  []*segment
	dead  [][]bool              // per segment, per content: replaced or removed
	live  map[string]contentRef // for a files index: path -> where its content is
	stats Stats
	// opened is the options Build made a files index with, Store made
	// absolute (the working directory may change), to open it again at
	// root, with label, when it turns out corrupt (see reopen); nil for
	// an index of documents.
	opened *IndexOptions

	mu      sync.Mutex
	pending *builder
	tk      *tokenizer
	seen    map[[32]byte]contentRef
}

// contentRef names a content in a segment.
type contentRef struct{ seg, content uint32 }

// NewIndex returns an empty in-memory index for Add.
func NewIndex() *Index {
	return &Index{tk: newTokenizer(), seen: make(map[[32]byte]contentRef)}
}

// Add chunks and indexes a document. A document whose content equals an
// earlier one's is indexed once, its path added to the earlier one's.
func (ix *Index) Add(doc Document) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.tk == nil {
		ix.tk = newTokenizer()
		ix.seen = make(map[[32]byte]contentRef)
	}
	if ix.pending == nil {
		ix.pending = newBuilder(true, 0)
	}
	h := sha256.Sum256(doc.Content)
	if ref, ok := ix.seen[h]; ok && int(ref.seg) == len(ix.segs) {
		c := &ix.pending.contents[ref.content]
		c.paths = append(c.paths, pathEntry{rel: doc.Path})
		return
	}
	a := analyze(ix.tk, ix.pending.dict, doc.Path, doc.Content)
	a.hash = h
	ix.seen[h] = contentRef{uint32(len(ix.segs)), uint32(len(ix.pending.contents))}
	ix.pending.add(a, []pathEntry{{rel: doc.Path}})
}

// flush seals documents added since the last search into a segment.
func (ix *Index) flush() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.pending == nil {
		return
	}
	s, err := parseSegment(ix.pending.encode()) // summed as it was encoded
	if err != nil {
		panic("files: a segment built in memory does not decode: " + err.Error()) // a bug, not input
	}
	ix.segs = append(ix.segs, s)
	ix.dead = append(ix.dead, make([]bool, len(s.contents)))
	ix.pending = nil
}

// ref is a scored chunk of a segment.
type ref struct {
	seg, chunk uint32
	content    uint32 // the chunk's content in the segment
	score      float64
}

// Search ranks the chunks against goal and returns the best limit of them
// (all matches if limit <= 0), best first; ties go to path then line order.
// A stored index is partly checked as it is read (see Build): when a part
// the search read fails its check, Search returns no hits and says so to
// the index's Log; Build the index again to rebuild the store, or query it
// through a Provider, which does.
func (ix *Index) Search(goal string, limit int) []Hit {
	refs := ix.search(goal)
	if limit > 0 && len(refs) > limit {
		refs = refs[:limit]
	}
	out := make([]Hit, 0, len(refs))
	for _, r := range refs {
		out = append(out, ix.hit(r))
	}
	if err := ix.corrupt(); err != nil {
		if ix.opened != nil {
			ix.logf(ix.opened, "index %s failed a check while answering (%v); no hits given", ix.opened.Store, err)
		}
		return nil
	}
	return out
}

// hit describes a ranked chunk; for a files index its text is read from
// disk as it is now.
func (ix *Index) hit(r ref) Hit {
	s := ix.segs[r.seg]
	ci := s.chunk(r.chunk)
	c := s.contents[ci.content]
	paths := ix.pathsOf(r.seg, ci.content)
	kind := frame.KindSnippet
	if c.doc {
		kind = frame.KindDoc
	}
	ch := Chunk{StartLine: int(ci.startLine), EndLine: int(ci.endLine), Start: int(ci.start), End: int(ci.end),
		Kind: kind, Heading: s.str(ci.headOff, ci.headN), Text: s.str(ci.textOff, ci.textN)}
	if ix.root != "" && len(paths) > 0 {
		if t, end, _, ok := ix.readChunk(paths[0], c.html, ch.StartLine, ch.EndLine); ok {
			ch.Text, ch.EndLine = string(t), end
		}
	}
	h := Hit{Chunk: ch, Paths: paths, Score: r.score}
	if len(paths) > 0 {
		h.Path = paths[0]
	}
	return h
}

// pathsOf returns the live paths of a content, in stored order.
func (ix *Index) pathsOf(seg, ci uint32) []string {
	var out []string
	for _, p := range ix.segs[seg].contents[ci].paths {
		if ix.live != nil {
			if r, ok := ix.live[p.rel]; !ok || r != (contentRef{seg, ci}) {
				continue
			}
		}
		out = append(out, p.rel)
	}
	return out
}

// queryTerm is a distinct query term with its weight across segments.
// concept is the index of the query's own term it stands for (itself, or
// the term whose thesaurus group added it); syn marks an added term.
type queryTerm struct {
	term    []byte
	idf     float64
	concept int
	syn     bool
}

// search scores every chunk sharing a term with the query.
func (ix *Index) search(query string) []ref {
	refs := searchAll([]*Index{ix}, query)[0]
	sortRefs(refs)
	return refs
}

// sortRefs orders refs best first; ties go to segment then chunk order.
func sortRefs(refs []ref) {
	slices.SortFunc(refs, func(a, b ref) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		if c := cmp.Compare(a.seg, b.seg); c != 0 {
			return c
		}
		return cmp.Compare(a.chunk, b.chunk)
	})
}

// searchAll scores the chunks of several indexes with shared collection
// statistics (chunk count, document frequencies, field lengths), so their
// scores compare: a small root's common words do not outrank a large one's.
// It returns each index's matches, in no particular order.
func searchAll(ixs []*Index, query string) [][]ref {
	st := collectionStats(ixs)
	if st.n == 0 {
		return make([][]ref, len(ixs))
	}
	var terms, seq [][]byte
	seen := map[string]bool{}
	newTokenizer().each([]byte(query), func(t []byte) {
		t = bytes.Clone(t)
		seq = append(seq, t)
		if !seen[string(t)] {
			seen[string(t)] = true
			terms = append(terms, t)
		}
	})
	var qts []queryTerm
	for i, t := range terms {
		for _, qt := range st.weigh(ixs, [][]byte{t}, 1) {
			qt.concept = i
			qts = append(qts, qt)
		}
	}
	for _, sy := range defaultThesaurus().expand(seq, terms) {
		for _, qt := range st.weigh(ixs, [][]byte{sy.term}, synonymWeight) {
			if qt.idf < synonymWeight*synonymMinIDF {
				// A common word (in more than about 1 in 20 chunks) adds
				// little weight but a long postings list.
				continue
			}
			qt.concept, qt.syn = sy.source, true
			qts = append(qts, qt)
		}
	}
	// A query term and its synonyms score as one: a chunk's best match
	// among them counts, not their sum (scoreSegment needs them adjacent).
	slices.SortStableFunc(qts, func(a, b queryTerm) int { return cmp.Compare(a.concept, b.concept) })
	out := scoreAll(ixs, qts, st)
	addFileEvidence(ixs, out)
	return out
}

// addFileEvidence mixes each chunk's score with its file's (see
// fileShare). It costs one pass over the matches and, per segment with
// matches, an array of the best scores of each of its contents.
func addFileEvidence(ixs []*Index, out [][]ref) {
	type best [fileTop]float64 // descending
	tops := make([][][]best, len(ixs))
	bestSum := 0.0
	for i, refs := range out {
		tops[i] = make([][]best, len(ixs[i].segs))
		for _, r := range refs {
			if tops[i][r.seg] == nil {
				tops[i][r.seg] = make([]best, len(ixs[i].segs[r.seg].contents))
			}
			t := &tops[i][r.seg][r.content]
			v := r.score
			for k := range t {
				if v > t[k] {
					t[k], v = v, t[k]
				}
			}
		}
	}
	sumOf := func(t *best) float64 {
		sum := 0.0
		for _, v := range t {
			sum += v
		}
		return sum
	}
	for i := range tops {
		for _, seg := range tops[i] {
			for k := range seg {
				bestSum = max(bestSum, sumOf(&seg[k]))
			}
		}
	}
	if bestSum == 0 {
		return
	}
	for i, refs := range out {
		for j, r := range refs {
			file := sumOf(&tops[i][r.seg][r.content]) / bestSum
			refs[j].score = min(max((1-fileShare)*r.score+fileShare*file, 0), 1)
		}
	}
}

// collection holds the statistics shared by every index searched together.
type collection struct {
	n, avgBody, avgHead float64
}

func collectionStats(ixs []*Index) collection {
	var n float64
	var bodyLen, headLen uint64
	for _, ix := range ixs {
		ix.flush()
		for _, s := range ix.segs {
			n += float64(s.nChunks)
			bodyLen += s.totalBodyLen
			headLen += s.totalHeadLen
		}
	}
	if n == 0 {
		return collection{}
	}
	return collection{n: n, avgBody: math.Max(float64(bodyLen)/n, 1), avgHead: math.Max(float64(headLen)/n, 1)}
}

// weigh gives each term its inverse document frequency, times w; terms no
// chunk holds are dropped.
func (st collection) weigh(ixs []*Index, terms [][]byte, w float64) []queryTerm {
	var out []queryTerm
	for _, t := range terms {
		df := 0.0
		for _, ix := range ixs {
			for _, s := range ix.segs {
				df += float64(postingCount(s.postings(t)))
				df += float64(ix.pathChunks(s, t))
			}
		}
		if df == 0 {
			continue
		}
		df = math.Min(df, st.n)
		out = append(out, queryTerm{term: t, idf: w * math.Log(1+(st.n-df+0.5)/(df+0.5))})
	}
	return out
}

func scoreAll(ixs []*Index, qts []queryTerm, st collection) [][]ref {
	out := make([][]ref, len(ixs))
	// The bound is the query's own terms' weight: a synonym adds to a
	// chunk's score but not to what a full match is.
	bound, all := 0.0, 0.0
	for _, qt := range qts {
		all += qt.idf
		if !qt.syn {
			bound += qt.idf
		}
	}
	if bound == 0 {
		bound = all
	}
	if bound == 0 {
		return out
	}
	for i, ix := range ixs {
		var refs []ref
		for si, s := range ix.segs {
			refs = append(refs, ix.scoreSegment(uint32(si), s, qts, st, bound)...)
		}
		out[i] = refs
	}
	return out
}

// scoreSegment accumulates BM25F over one segment's postings.
func (ix *Index) scoreSegment(si uint32, s *segment, qts []queryTerm, st collection, bound float64) []ref {
	avgBody, avgHead := st.avgBody, st.avgHead
	tk := newTokenizer()
	scores := make([]float32, s.nChunks)
	acc := make([]float32, s.nChunks)
	// A concept's terms (a query term and its synonyms) are adjacent in
	// qts; cs holds each chunk's best match among the current concept's
	// terms until the next concept starts.
	cs := make([]float32, s.nChunks)
	var touched, termTouched, conceptTouched []uint32
	flushConcept := func() {
		for _, c := range conceptTouched {
			scores[c] += cs[c]
			cs[c] = 0
		}
		conceptTouched = conceptTouched[:0]
	}
	dead := ix.dead[si]
	for qi, qt := range qts {
		if qi > 0 && qts[qi-1].concept != qt.concept {
			flushConcept()
		}
		termTouched = termTouched[:0]
		p := s.postings(qt.term)
		if p != nil {
			if _, k := binary.Uvarint(p); k > 0 {
				p = p[k:]
			} else {
				p = s.malformedPostings()
			}
			var id uint64
			for len(p) > 0 {
				d, k1 := binary.Uvarint(p)
				if k1 <= 0 {
					s.malformedPostings()
					break
				}
				tb, k2 := binary.Uvarint(p[k1:])
				if k2 <= 0 {
					s.malformedPostings()
					break
				}
				th, k3 := binary.Uvarint(p[k1+k2:])
				if k3 <= 0 {
					s.malformedPostings()
					break
				}
				p = p[k1+k2+k3:]
				id += d
				c := uint32(id - 1)
				if d == 0 || id > uint64(s.nChunks) {
					s.malformedPostings()
					break
				}
				ci := s.chunk(c)
				if dead[ci.content] {
					continue
				}
				v := 0.0
				if tb > 0 {
					// Length normalisation penalises a chunk longer than
					// the average but gives a shorter one no bonus: chunks
					// are bounded in size already, and a one-line field or
					// constant otherwise outranks the section explaining it.
					v += bodyWeight * float64(tb) / (1 - bodyB + bodyB*max(float64(ci.bodyLen)/avgBody, 1))
				}
				if th > 0 {
					v += headWeight * float64(th) / (1 - headB + headB*float64(ci.headLen)/avgHead)
				}
				if acc[c] == 0 {
					termTouched = append(termTouched, c)
				}
				acc[c] += float32(v)
			}
		}
		ix.eachPathPosting(s, qt.term, func(content uint32, tf uint64) {
			if dead[content] {
				return
			}
			ct := s.contents[content]
			w := pathWeight * float64(min(tf, 2))
			if inPackageName(tk, ct, qt.term) {
				w = pathWeight * packageBy
			}
			for c := ct.firstChunk; c < ct.firstChunk+ct.nChunks; c++ {
				if acc[c] == 0 {
					termTouched = append(termTouched, c)
				}
				acc[c] += float32(w)
			}
		})
		for _, c := range termTouched {
			tf := float64(acc[c])
			if cs[c] == 0 {
				if scores[c] == 0 {
					touched = append(touched, c)
				}
				conceptTouched = append(conceptTouched, c)
			}
			cs[c] = max(cs[c], float32(qt.idf*tf/(bm25K1+tf)))
			acc[c] = 0
		}
	}
	flushConcept()
	return withPriors(si, s, touched, scores, bound)
}

// withPriors returns the touched chunks' references, each score scaled to
// [0, 1] by bound and by the priors of what the chunk is: internal code,
// generated files, tests and data weigh less than the public interface and
// prose that answer an engineer's question.
func withPriors(si uint32, s *segment, touched []uint32, scores []float32, bound float64) []ref {
	out := make([]ref, 0, len(touched))
	for _, c := range touched {
		sc := float64(scores[c]) / bound
		ci := s.chunk(c)
		if ci.flags&chunkInternal != 0 {
			sc *= internalBy
		}
		if ci.flags&chunkOffByDefault != 0 {
			sc *= offByDefaultBy
		}
		if ci.flags&chunkDeprecated != 0 {
			sc *= deprecatedBy
		}
		if ct := s.contents[ci.content]; ct.generated {
			sc *= generatedBy
		} else if ct.test {
			sc *= testBy
		} else if ct.data {
			sc *= dataBy
		}
		out = append(out, ref{si, c, ci.content, min(max(sc, 0), 1)})
	}
	return out
}

// postingCount reads the count prefix of an encoded postings list.
func postingCount(p []byte) uint64 {
	if p == nil {
		return 0
	}
	n, _ := binary.Uvarint(p)
	return n
}

// pathChunks counts the chunks of the live contents whose path holds t.
func (ix *Index) pathChunks(s *segment, t []byte) int {
	n := 0
	ix.eachPathPosting(s, t, func(content uint32, _ uint64) { n += int(s.contents[content].nChunks) })
	return n
}

func (ix *Index) eachPathPosting(s *segment, t []byte, fn func(content uint32, tf uint64)) {
	key := make([]byte, 0, len(t)+1)
	key = append(append(key, 0), t...)
	p := s.postings(key)
	if p == nil {
		return
	}
	_, k := binary.Uvarint(p)
	if k <= 0 {
		s.malformedPostings()
		return
	}
	p = p[k:]
	var id uint64
	for len(p) > 0 {
		d, k1 := binary.Uvarint(p)
		if k1 <= 0 {
			s.malformedPostings()
			return
		}
		tf, k2 := binary.Uvarint(p[k1:])
		if k2 <= 0 {
			s.malformedPostings()
			return
		}
		p = p[k1+k2:]
		id += d
		if d == 0 || id > uint64(len(s.contents)) {
			s.malformedPostings()
			return
		}
		fn(uint32(id-1), tf)
	}
}

// isGenerated reports a file that says it is machine-made in its first
// lines, by the Go convention ("Code generated ... DO NOT EDIT.") or the
// common "@generated" marker.
func isGenerated(text []byte) bool {
	head := text[:min(len(text), 1024)]
	return bytes.Contains(head, []byte("DO NOT EDIT")) || bytes.Contains(head, []byte("@generated"))
}

func isHTML(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm":
		return true
	}
	return false
}

// isTest reports a test file by the common naming conventions: Go's
// _test.go, name.test.ext and name.spec.ext, test_name.py, and files under
// a testdata, test or tests directory, or under a directory whose name
// starts with "_", which the Go tool leaves out of builds (generators'
// inputs and scratch code live there).
func isTest(rel string) bool {
	base := path.Base(rel)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case strings.HasSuffix(stem, "_test"), strings.HasSuffix(stem, ".test"), strings.HasSuffix(stem, ".spec"),
		strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"):
		return true
	}
	for _, dir := range strings.Split(path.Dir(rel), "/") {
		if dir == "testdata" || dir == "test" || dir == "tests" || dir == "__tests__" || strings.HasPrefix(dir, "_") {
			return true
		}
	}
	return false
}

// isData reports a file that holds data or configuration rather than code
// or prose, by its extension.
func isData(rel string) bool {
	switch strings.ToLower(path.Ext(rel)) {
	case ".json", ".yaml", ".yml", ".toml", ".xml", ".csv", ".tsv", ".ini", ".cfg", ".conf", ".golden":
		return true
	}
	return false
}
