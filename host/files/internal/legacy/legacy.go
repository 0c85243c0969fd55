// Package legacy keeps the files provider's first index (40-line chunks,
// BM25 with path and heading words pasted into every chunk) so that the
// relevance evaluation can report the new index's gain over it. Nothing
// outside the evaluation uses it.
package legacy

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/host/files/internal/lex"
)

// Defaults for IndexOptions.
const (
	defaultMaxFileSize = 1 << 20 // bytes; larger files are skipped and counted
	defaultChunkLines  = 40      // lines per chunk (a markdown heading also starts one)
)

// BM25 parameters (the usual Robertson/Sparck Jones values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// IndexOptions tunes Build. A nil pointer or zero fields mean the defaults.
type IndexOptions struct {
	MaxFileSize int64     // files larger than this are skipped (default defaultMaxFileSize)
	ChunkLines  int       // maximum lines per chunk (default defaultChunkLines)
	Progress    io.Writer // if non-nil, progress lines are written here while indexing
}

// skipCounts counts the files Build left out and why. Nothing is left out silently.
type skipCounts struct {
	Binary     int `json:"binary"`     // NUL byte or invalid UTF-8
	TooLarge   int `json:"too_large"`  // larger than MaxFileSize
	Unreadable int `json:"unreadable"` // open/read failed
	Symlinks   int `json:"symlinks"`   // symbolic links are never followed
}

// fileEntry is one indexed file.
type fileEntry struct {
	rel     string    // slash-separated path relative to the root
	abs     string    // absolute path
	modTime time.Time // modification time at index time
	doc     bool      // prose (markdown, text) rather than code
}

// chunk is a run of whole lines of one file.
type chunk struct {
	file       uint32
	startLine  int // 1-based, inclusive
	endLine    int // 1-based, inclusive
	start, end int // byte offsets in the file at index time
	length     int // number of indexed terms
	heading    string
}

type posting struct {
	chunk uint32
	tf    uint32
}

// Index is a BM25 index over the line chunks of the text files under a root.
// It holds no file content: a hit is read back from disk when served, so a
// frame always carries the bytes its provenance digest describes.
type Index struct {
	label    string // prefix shown in titles and citation labels
	files    []fileEntry
	chunks   []chunk
	termID   map[string]uint32 // term -> index into postings
	postings [][]posting
	avgLen   float64
	skipped  skipCounts
	byPath   map[string]uint32 // rel path -> file index
}

// Build walks root and indexes every regular text file under it. Hidden
// directories (".git" and the like) are not descended into; symbolic links are
// counted and never followed, so nothing outside root is ever read.
func Build(ctx context.Context, root string, opts *IndexOptions) (*Index, error) {
	var o IndexOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = defaultMaxFileSize
	}
	if o.ChunkLines <= 0 {
		o.ChunkLines = defaultChunkLines
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("files: index %s: %w", root, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("files: index %s: %w", root, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("files: index %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("files: index %s: not a directory", root)
	}
	label := ""
	if !filepath.IsAbs(root) {
		if c := filepath.ToSlash(filepath.Clean(root)); c != "." && !strings.HasPrefix(c, "../") && c != ".." {
			label = c + "/"
		}
	}
	ix := &Index{label: label, termID: make(map[string]uint32), byPath: make(map[string]uint32)}
	tok := &tokenizer{}
	tf := make(map[uint32]uint32)
	var totalLen int64
	lastReport := time.Now()
	seen := 0
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if d != nil && d.IsDir() && path != abs {
				ix.skipped.Unreadable++
				return fs.SkipDir
			}
			ix.skipped.Unreadable++
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != abs && strings.HasPrefix(name, ".") {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			ix.skipped.Symlinks++
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(name, ".") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			ix.skipped.Unreadable++
			return nil
		}
		if info.Size() > o.MaxFileSize {
			ix.skipped.TooLarge++
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			ix.skipped.Unreadable++
			return nil
		}
		if !isText(data) {
			ix.skipped.Binary++
			return nil
		}
		rel, err := filepath.Rel(abs, path)
		if err != nil {
			ix.skipped.Unreadable++
			return nil
		}
		rel = filepath.ToSlash(rel)
		fi := uint32(len(ix.files))
		ix.files = append(ix.files, fileEntry{rel: rel, abs: path, modTime: info.ModTime(), doc: isProse(name)})
		ix.byPath[rel] = fi
		totalLen += ix.addFile(fi, rel, data, o.ChunkLines, tok, tf)
		seen++
		if o.Progress != nil && time.Since(lastReport) > 200*time.Millisecond {
			lastReport = time.Now()
			fmt.Fprintf(o.Progress, "\rindexing: %d files, %d chunks", seen, len(ix.chunks))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("files: index %s: %w", root, err)
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\rindexed: %d files, %d chunks (skipped %d binary, %d too large, %d unreadable, %d symlinks)\n",
			len(ix.files), len(ix.chunks), ix.skipped.Binary, ix.skipped.TooLarge, ix.skipped.Unreadable, ix.skipped.Symlinks)
	}
	if len(ix.chunks) > 0 {
		ix.avgLen = float64(totalLen) / float64(len(ix.chunks))
	}
	return ix, nil
}

// addFile splits data into chunks and indexes their terms; it returns the
// total number of terms indexed. tok and tf are scratch space reused across
// files, so indexing allocates only for new terms and postings.
func (ix *Index) addFile(fi uint32, rel string, data []byte, maxLines int, tok *tokenizer, tf map[uint32]uint32) int64 {
	prose := ix.files[fi].doc
	var total int64
	// The file's path words are indexed into every chunk of the file, so a
	// query naming a file finds it.
	var pathTerms []uint32
	tok.each(rel, func(t []byte) { pathTerms = append(pathTerms, ix.intern(t)) })
	lines := lex.SplitLines(data)
	start := 0
	var heading string
	flush := func(end int) {
		if end <= start {
			return
		}
		c := chunk{file: fi, startLine: start + 1, endLine: end, start: lines[start].Off, heading: heading}
		c.end = lines[end-1].Off + lines[end-1].Len
		clear(tf)
		tok.eachBytes(data[c.start:c.end], func(t []byte) {
			tf[ix.intern(t)]++
			c.length++
		})
		for _, id := range pathTerms {
			tf[id]++
			c.length++
		}
		// The section's heading describes every chunk under it, also those
		// past the first, and weighs more than a body word (a title field
		// in BM25F terms): its terms are counted twice more in each chunk.
		if heading != "" {
			tok.each(heading, func(t []byte) {
				tf[ix.intern(t)] += 2
				c.length += 2
			})
		}
		ci := uint32(len(ix.chunks))
		ix.chunks = append(ix.chunks, c)
		for id, n := range tf {
			ix.postings[id] = append(ix.postings[id], posting{chunk: ci, tf: n})
		}
		total += int64(c.length)
		start = end
	}
	for i, ln := range lines {
		text := data[ln.Off : ln.Off+ln.Len]
		isHeading := prose && len(text) > 0 && text[0] == '#'
		if isHeading && i > start {
			flush(i)
		}
		if isHeading {
			heading = strings.TrimSpace(strings.TrimLeft(string(bytes.TrimRight(text, "\r\n")), "#"))
		}
		if i+1-start >= maxLines {
			flush(i + 1)
		}
	}
	flush(len(lines))
	return total
}

// intern returns the id of term t, adding it on first sight.
func (ix *Index) intern(t []byte) uint32 {
	if id, ok := ix.termID[string(t)]; ok {
		return id
	}
	id := uint32(len(ix.postings))
	ix.termID[string(t)] = id
	ix.postings = append(ix.postings, nil)
	return id
}

// isText reports whether data looks like text: valid UTF-8 with no NUL byte.
func isText(data []byte) bool {
	return bytes.IndexByte(data, 0) < 0 && utf8.Valid(data)
}

func isProse(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown", ".txt", ".rst", ".adoc", "":
		return true
	}
	return false
}

// hit is a scored chunk.
type hit struct {
	chunk uint32
	score float64
}

// search ranks every chunk that shares a term with the query by BM25 and
// returns them best first (ties by chunk order, which is path then line order).
func (ix *Index) search(query string) []hit {
	qterms := terms(query)
	if len(qterms) == 0 || len(ix.chunks) == 0 {
		return nil
	}
	uniq := make(map[string]bool, len(qterms))
	scores := make([]float64, len(ix.chunks))
	var touched []uint32
	n := float64(len(ix.chunks))
	for _, t := range qterms {
		if uniq[t] {
			continue
		}
		uniq[t] = true
		id, ok := ix.termID[t]
		if !ok {
			continue
		}
		ps := ix.postings[id]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			dl := float64(ix.chunks[p.chunk].length)
			if scores[p.chunk] == 0 {
				touched = append(touched, p.chunk)
			}
			scores[p.chunk] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/ix.avgLen))
		}
	}
	hits := make([]hit, 0, len(touched))
	for _, c := range touched {
		hits = append(hits, hit{c, scores[c]})
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.chunk, b.chunk)
	})
	return hits
}

// terms splits text into lower-case index terms: runs of letters and digits,
// split further at camelCase boundaries, stop words removed, a plural "s"
// stripped. Queries and documents go through the same rules.
func terms(text string) []string {
	var out []string
	(&tokenizer{}).each(text, func(t []byte) { out = append(out, string(t)) })
	return out
}

// tokenizer holds scratch buffers so tokenising allocates nothing per term.
type tokenizer struct {
	word []rune
	term []byte
}

func (tk *tokenizer) each(text string, fn func([]byte)) {
	tk.word = tk.word[:0]
	for _, r := range text {
		tk.step(r, fn)
	}
	tk.flush(fn)
}

func (tk *tokenizer) eachBytes(b []byte, fn func([]byte)) {
	tk.word = tk.word[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			tk.step(rune(c), fn)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		tk.step(r, fn)
		i += n
	}
	tk.flush(fn)
}

func (tk *tokenizer) step(r rune, fn func([]byte)) {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			tk.word = append(tk.word, r)
			return
		}
	} else if unicode.IsLetter(r) || unicode.IsDigit(r) {
		tk.word = append(tk.word, r)
		return
	}
	tk.flush(fn)
}

// flush emits the pending word's parts: "BudgetSplit" -> budget, split;
// "HTTPServer" -> http, server.
func (tk *tokenizer) flush(fn func([]byte)) {
	w := tk.word
	if len(w) == 0 {
		return
	}
	start := 0
	for i := 1; i < len(w); i++ {
		if lex.IsBoundary(w, i) {
			tk.emit(w[start:i], fn)
			start = i
		}
	}
	tk.emit(w[start:], fn)
	tk.word = tk.word[:0]
}

func (tk *tokenizer) emit(part []rune, fn func([]byte)) {
	if len(part) < 2 {
		return
	}
	t := lex.AppendLower(tk.term[:0], part)
	tk.term = t
	if stopwords[string(t)] {
		return
	}
	t = stemBytes(t)
	if len(t) < 2 || stopwords[string(t)] {
		return
	}
	fn(t)
}

// stopwords are dropped from queries and documents: they carry no signal.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "how": true, "in": true, "is": true, "it": true, "of": true, "on": true,
	"or": true, "the": true, "this": true, "to": true, "was": true, "what": true, "when": true,
	"where": true, "which": true, "with": true, "between": true, "does": true, "do": true,
}

// stemBytes removes the most common English plural endings, conservatively,
// in place.
func stemBytes(w []byte) []byte {
	n := len(w)
	switch {
	case n > 4 && w[n-3] == 'i' && w[n-2] == 'e' && w[n-1] == 's':
		w = append(w[:n-3], 'y')
	case n > 3 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u':
		w = w[:n-1]
	}
	return w
}

// Hit is one ranked chunk: its file (slash path relative to the root), its
// line range and its length in bytes.
type Hit struct {
	Path               string
	StartLine, EndLine int
	Bytes              int
}

// Search ranks the chunks against query, best first.
func (ix *Index) Search(query string) []Hit {
	var out []Hit
	for _, h := range ix.search(query) {
		c := ix.chunks[h.chunk]
		out = append(out, Hit{Path: ix.files[c.file].rel, StartLine: c.startLine, EndLine: c.endLine, Bytes: c.end - c.start})
	}
	return out
}
