package files

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// exportedDecl reports whether a Go chunk's symbol field names an exported
// declaration (or the package clause): "Server.Shutdown", "Marshal",
// "package http"; any exported name in a merged group counts.
func exportedDecl(heading string) bool {
	if heading == "" || strings.HasPrefix(heading, "package ") {
		return true
	}
	for _, part := range strings.FieldsFunc(heading, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
		name := part
		if _, after, ok := strings.Cut(part, "."); ok {
			name = after
		}
		if name != "" && name[0] >= 'A' && name[0] <= 'Z' {
			return true
		}
	}
	return false
}

// A segment is an immutable inverted index over a set of documents in one
// byte image: the same bytes are built in memory and, for the files
// provider, written to and mapped from disk, so a query reads only the
// postings of its own terms. Layout (little-endian):
//
//	header   magic "CTXKSEG1", version, counts and section offsets, the
//	         CRC-32C of the block table (the image's identity), for a delta
//	         that of the base it applies to, the table's offset, and the
//	         CRC-32C of the header before it
//	contents per content: hash, flags, chunk range, paths (each with size
//	         and modification time)
//	chunks   fixed-size records (content, lines, bytes, field lengths,
//	         heading and text references into the string pool)
//	strings  headings and, for in-memory documents, chunk texts
//	terms    sorted term offsets, then the term bytes
//	postings per term: count, then (Δchunk, body tf, heading tf); path
//	         terms (prefixed with 0x00) list (Δcontent, tf)
//	table    the CRC-32C of each block of blockSize bytes from the end of
//	         the header to the table (the last block may be short)
//
// A large image is checked lazily (see lazyCheckMin): at open, the header,
// the table and the blocks of the sections every query reads (contents,
// term and postings tables); the chunk records, strings and postings a
// query reads, block by block as it first reads them. A block that fails
// marks the segment corrupt (see segment.corrupt), and the provider then
// opens the store again checking it whole, which rebuilds it.
const (
	segMagic   = "CTXKSEG1"
	segVersion = 16
	headerSize = 8 + 4*19
	chunkRec   = 48
	blockShift = 16
	blockSize  = 1 << blockShift
)

// lazyCheckMin is the image size from which the chunk records, strings and
// postings are checked as they are read rather than at open. Below it,
// checking the whole image costs under 2 ms. A variable for tests.
var lazyCheckMin = 8 << 20

// segment reads a segment image.
type segment struct {
	data                        []byte
	contents                    []content
	chunkOff, strOff            int
	termIdx, termBytes, postIdx int
	postBytes                   int
	nChunks, nTerms             int
	nContents, contentsOff      int
	avgBody, avgHead            float64
	totalBodyLen, totalHeadLen  uint64
	optionsSum                  uint32
	sum                         uint32 // CRC-32C of the block table: the image's identity
	baseSum                     uint32 // for a delta, the sum of its base; 0 for a base
	unmap                       func() error

	tableOff int             // offset of the block table
	checked  bool            // every block is known good (or the image was made here)
	good     []atomic.Uint32 // bitmap of the blocks checked and found good
	bad      atomic.Int64    // 1 + the first block found bad, 0 if none
	// malformed is set when a record read is out of its section's bounds
	// (an image whose sums hold but whose structure does not).
	malformed atomic.Bool
}

// content is one distinct document content and every path it was found at.
type content struct {
	hash       [32]byte
	doc        bool // kind doc (prose) rather than snippet
	generated  bool // "Code generated ... DO NOT EDIT." or the like
	html       bool // served as text made from HTML
	binary     bool // not text: kept only so a refresh need not read it again
	test       bool // a test file by its name (see isTest)
	data       bool // a data or configuration file by its extension (see isData)
	transcoded bool // decoded from Latin-1 or UTF-16: offsets are in the text, not the file
	gone       bool // in a delta: its paths were removed from the tree since the base
	firstChunk uint32
	nChunks    uint32
	paths      []pathEntry
}

// pathEntry is one place a content was found.
type pathEntry struct {
	rel     string
	size    int64
	modTime int64 // Unix nanoseconds
}

// chunkInfo is a decoded chunk record.
type chunkInfo struct {
	content            uint32
	startLine, endLine uint32
	start, end         uint32
	bodyLen, headLen   uint32
	headOff, headN     uint32
	textOff, textN     uint32
	flags              uint32 // chunkInternal
}

// Chunk flags.
const (
	// chunkInternal marks code that is not part of a public interface: a
	// Go declaration with an unexported name or in package main (a chunk
	// of the package's doc comment alone is not), or any chunk of a file
	// under an internal directory.
	chunkInternal = 1 << iota
	// chunkOffByDefault marks a chunk of a Go file that the go command
	// leaves out of every default build: its //go:build line needs a
	// GOEXPERIMENT or the "ignore" tag (experimental packages, generators).
	chunkOffByDefault
	// chunkDeprecated marks a Go declaration whose doc comment has a
	// "Deprecated:" paragraph.
	chunkDeprecated
)

// errCorrupt reports an index image that fails its checks.
var errCorrupt = errors.New("index is corrupt")

// errOtherVersion reports an intact index written in another format
// version (an older or newer ctxkit): not corrupt, just not readable here.
var errOtherVersion = errors.New("index is in another format")

// chunk decodes chunk record i (below nChunks). A record whose block
// fails its checksum, or that names a content the segment does not have,
// reads as zeros (chunk 0 of content 0, empty), and the segment is marked
// corrupt.
func (s *segment) chunk(i uint32) chunkInfo {
	off := s.chunkOff + int(i)*chunkRec
	if !s.checked && !s.check(off, off+chunkRec) {
		return chunkInfo{}
	}
	b := s.data[off:]
	u := func(k int) uint32 { return binary.LittleEndian.Uint32(b[4*k:]) }
	ci := chunkInfo{u(0), u(1), u(2), u(3), u(4), u(5), u(6), u(7), u(8), u(9), u(10), u(11)}
	if int(ci.content) >= len(s.contents) {
		s.malformed.Store(true)
		return chunkInfo{}
	}
	return ci
}

// strIn reports whether the string pool holds off..off+n; if not, the
// segment is marked corrupt.
func (s *segment) strIn(off, n uint32) bool {
	if uint64(off)+uint64(n) > uint64(s.termIdx-s.strOff) {
		s.malformed.Store(true)
		return false
	}
	return true
}

func (s *segment) str(off, n uint32) string {
	if n == 0 || !s.strIn(off, n) {
		return ""
	}
	a := s.strOff + int(off)
	if !s.checked && !s.check(a, a+int(n)) {
		return ""
	}
	return string(s.data[a : a+int(n)])
}

// strBytes is str without the copy: the bytes stay the image's, valid
// while it is mapped. A block that fails its checksum reads as empty, and
// the segment is marked corrupt.
func (s *segment) strBytes(off, n uint32) []byte {
	if n == 0 || !s.strIn(off, n) {
		return nil
	}
	a := s.strOff + int(off)
	if !s.checked && !s.check(a, a+int(n)) {
		return nil
	}
	return s.data[a : a+int(n)]
}

// term returns term i (below nTerms). Offsets out of the term bytes read
// as an empty term, and the segment is marked corrupt.
func (s *segment) term(i int) []byte {
	a := binary.LittleEndian.Uint32(s.data[s.termIdx+4*i:])
	b := binary.LittleEndian.Uint32(s.data[s.termIdx+4*i+4:])
	if a > b || int(b) > s.postIdx-s.termBytes {
		s.malformed.Store(true)
		return nil
	}
	return s.data[s.termBytes+int(a) : s.termBytes+int(b)]
}

// postings returns the encoded postings of term t, or nil.
func (s *segment) postings(t []byte) []byte {
	i := sort.Search(s.nTerms, func(i int) bool { return bytes.Compare(s.term(i), t) >= 0 })
	if i >= s.nTerms || !bytes.Equal(s.term(i), t) {
		return nil
	}
	a := s.postBytes + int(binary.LittleEndian.Uint32(s.data[s.postIdx+4*i:]))
	b := s.postBytes + int(binary.LittleEndian.Uint32(s.data[s.postIdx+4*i+4:]))
	if a > b || b > s.tableOff || !s.checked && !s.check(a, b) {
		return nil
	}
	return s.data[a:b]
}

// check reports whether the blocks holding data[a:b] are as written,
// summing each the first time it is read. A bad block marks the segment
// corrupt.
func (s *segment) check(a, b int) bool {
	if a < headerSize || b > s.tableOff || a > b {
		s.bad.CompareAndSwap(0, 1)
		return false
	}
	if a == b {
		return true
	}
	for k := (a - headerSize) >> blockShift; k <= (b-1-headerSize)>>blockShift; k++ {
		w, bit := &s.good[k>>5], uint32(1)<<(k&31)
		if w.Load()&bit != 0 {
			continue
		}
		lo := headerSize + k<<blockShift
		hi := min(lo+blockSize, s.tableOff)
		if crc32.Checksum(s.data[lo:hi], castagnoli) != binary.LittleEndian.Uint32(s.data[s.tableOff+4*k:]) {
			s.bad.CompareAndSwap(0, int64(k)+1)
			return false
		}
		w.Or(bit)
	}
	return true
}

// corrupt returns why the segment cannot be trusted, when a lazily checked
// block failed its checksum; nil otherwise.
func (s *segment) corrupt() error {
	if k := s.bad.Load(); k > 0 {
		return fmt.Errorf("%w: checksum mismatch in block %d", errCorrupt, k-1)
	}
	if s.malformed.Load() {
		return fmt.Errorf("%w: a record is out of bounds", errCorrupt)
	}
	return nil
}

// checkSegment checks and decodes a segment image's header and contents.
// A large image (see lazyCheckMin) is checked in part, the rest as it is
// read, unless whole is set.
func checkSegment(data []byte, whole bool) (*segment, error) {
	s, err := readSegment(data)
	if err != nil {
		return nil, err
	}
	if tb := s.data[s.tableOff:]; crc32.Checksum(tb, castagnoli) != s.sum {
		return nil, fmt.Errorf("%w: checksum mismatch in the block table", errCorrupt)
	}
	regions := [][2]int{{headerSize, s.tableOff}}
	if !whole && len(data) >= lazyCheckMin {
		// Contents are decoded at open; the term and postings tables are
		// searched by every query. Chunks, strings and postings wait.
		regions = [][2]int{{headerSize, s.chunkOff}, {s.termIdx, s.postBytes}}
	}
	for _, r := range regions {
		if !s.check(r[0], r[1]) {
			return nil, s.corrupt()
		}
	}
	if err := s.decodeContents(); err != nil {
		return nil, err
	}
	return s, nil
}

func checkHeader(data []byte) error {
	if len(data) < headerSize || string(data[:8]) != segMagic {
		return fmt.Errorf("%w: bad magic", errCorrupt)
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != segVersion {
		return fmt.Errorf("%w: version %d, this ctxkit reads %d", errOtherVersion, v, segVersion)
	}
	return nil
}

// parseSegment decodes an image's header and contents without summing it:
// for an image this process has just encoded or written, whose sums it
// computed.
func parseSegment(data []byte) (*segment, error) {
	s, err := readSegment(data)
	if err != nil {
		return nil, err
	}
	s.checked = true
	if err := s.decodeContents(); err != nil {
		return nil, err
	}
	return s, nil
}

// readSegment checks an image's header (its magic, version and sum) and
// that its offsets are in range, and decodes it.
func readSegment(data []byte) (*segment, error) {
	if err := checkHeader(data); err != nil {
		return nil, err
	}
	h := func(k int) uint32 { return binary.LittleEndian.Uint32(data[8+4*k:]) }
	if crc32.Checksum(data[:8+4*18], castagnoli) != h(18) {
		return nil, fmt.Errorf("%w: checksum mismatch in the header", errCorrupt)
	}
	s := &segment{data: data}
	s.nContents = int(h(1))
	s.nChunks, s.nTerms = int(h(2)), int(h(3))
	contentsOff := int(h(4))
	s.chunkOff, s.strOff = int(h(5)), int(h(6))
	s.termIdx, s.termBytes = int(h(7)), int(h(8))
	s.postIdx, s.postBytes = int(h(9)), int(h(10))
	s.totalBodyLen = uint64(h(11)) | uint64(h(12))<<32
	s.totalHeadLen = uint64(h(13))
	s.optionsSum = h(14)
	s.sum, s.baseSum = h(15), h(16)
	s.tableOff = int(h(17))
	prev := headerSize
	for _, off := range []int{contentsOff, s.chunkOff, s.strOff, s.termIdx, s.termBytes, s.postIdx, s.postBytes, s.tableOff} {
		if off < prev || off > len(data) {
			return nil, fmt.Errorf("%w: section offset out of range", errCorrupt)
		}
		prev = off
	}
	nBlocks := (s.tableOff - headerSize + blockSize - 1) >> blockShift
	if s.tableOff+4*nBlocks != len(data) {
		return nil, fmt.Errorf("%w: block table out of range", errCorrupt)
	}
	s.good = make([]atomic.Uint32, (nBlocks+31)/32)
	if s.chunkOff+s.nChunks*chunkRec > s.strOff || s.termIdx+4*(s.nTerms+1) > s.termBytes || s.postIdx+4*(s.nTerms+1) > s.postBytes {
		return nil, fmt.Errorf("%w: table out of range", errCorrupt)
	}
	// Each content takes 36 bytes at least (its hash and four varints):
	// a count the section cannot hold must not size an allocation.
	if s.nContents > (s.chunkOff-contentsOff)/36 {
		return nil, fmt.Errorf("%w: content count", errCorrupt)
	}
	if s.nChunks > 0 && s.nContents == 0 {
		return nil, fmt.Errorf("%w: chunks without contents", errCorrupt)
	}
	s.contentsOff = contentsOff
	if s.nChunks > 0 {
		s.avgBody = float64(s.totalBodyLen) / float64(s.nChunks)
		s.avgHead = float64(s.totalHeadLen) / float64(s.nChunks)
	}
	return s, nil
}

// decodeContents decodes the contents section, once it is checked.
func (s *segment) decodeContents() error {
	data, contentsOff, nContents := s.data, s.contentsOff, s.nContents
	// The paths are cut from one copy of the contents section, not copied
	// one by one: a store of 57k files would cost as many allocations.
	sec := string(data[contentsOff:s.chunkOff])
	r := reader{b: data[contentsOff:s.chunkOff], str: sec}
	s.contents = make([]content, 0, nContents)
	for range nContents {
		c, err := r.content()
		if err != nil {
			return err
		}
		if uint64(c.firstChunk)+uint64(c.nChunks) > uint64(s.nChunks) {
			return fmt.Errorf("%w: chunk range out of bounds", errCorrupt)
		}
		s.contents = append(s.contents, c)
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// reader decodes the varint-framed contents section. str, when set, holds
// the same bytes as b did at the start, and strings are cut from it.
type reader struct {
	b     []byte
	str   string
	paths []pathEntry
	err   error
}

// string returns the next n bytes as a string.
func (r *reader) string(n uint64) string {
	if r.str == "" {
		return string(r.bytes(n))
	}
	off := len(r.str) - len(r.b)
	if r.bytes(n) == nil {
		return ""
	}
	return r.str[off : off+int(n)]
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: truncated varint", errCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: truncated field", errCorrupt)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) content() (content, error) {
	var c content
	copy(c.hash[:], r.bytes(32))
	flags := r.uvarint()
	c.doc, c.generated, c.html, c.binary, c.test = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0, flags&16 != 0
	c.transcoded, c.data, c.gone = flags&32 != 0, flags&64 != 0, flags&128 != 0
	c.firstChunk = uint32(r.uvarint())
	c.nChunks = uint32(r.uvarint())
	np := r.uvarint()
	if np > 1<<20 {
		return c, fmt.Errorf("%w: path count", errCorrupt)
	}
	if np > uint64(len(r.b)) { // each path takes three bytes at least
		return c, fmt.Errorf("%w: path count", errCorrupt)
	}
	// The paths of every content share one slab, each capped so an append
	// to one cannot overwrite the next.
	if uint64(cap(r.paths)-len(r.paths)) < np {
		r.paths = make([]pathEntry, 0, max(np, 1024))
	}
	start := len(r.paths)
	for range np {
		rel := r.string(r.uvarint())
		size := int64(r.uvarint())
		mod := int64(r.uvarint())
		r.paths = append(r.paths, pathEntry{rel: rel, size: size, modTime: mod})
	}
	c.paths = r.paths[start:len(r.paths):len(r.paths)]
	if np == 0 {
		c.paths = nil
	}
	return c, r.err
}

// builder accumulates documents into a segment image.
type builder struct {
	contents []content
	chunks   []byte
	nChunks  uint32
	strs     []byte
	dict     *termDict
	posts    [][]byte // per term id
	last     []uint32 // last chunk (or content) id appended per term, +1
	bodyLen  uint64
	headLen  uint64
	keepText bool
	options  uint32
	baseSum  uint32 // set for a delta: the sum of the base it applies to
}

func newBuilder(keepText bool, options uint32) *builder {
	return &builder{dict: newTermDict(), keepText: keepText, options: options}
}

// termFreq is one term's counts in one chunk.
type termFreq struct {
	term       uint32 // id in the builder's termDict
	body, head uint32
}

// countTerms turns a chunk's term ids (id<<1, or id<<1|1 for a heading
// term) into per-term counts, in id order. It sorts tids.
func countTerms(tids []uint32) []termFreq {
	slices.Sort(tids)
	var out []termFreq
	for i := 0; i < len(tids); {
		id := tids[i] >> 1
		tf := termFreq{term: id}
		for ; i < len(tids) && tids[i]>>1 == id; i++ {
			if tids[i]&1 == 0 {
				tf.body++
			} else {
				tf.head++
			}
		}
		out = append(out, tf)
	}
	return out
}

// analyzed is a document chunked and tokenised, ready to add.
type analyzed struct {
	chunks     []Chunk
	freqs      [][]termFreq // per chunk
	bodyLens   []uint32
	flags      []uint32
	headLens   []uint32
	pathTerms  []termFreq // path field, per document
	doc        bool
	generated  bool
	html       bool
	test       bool
	data       bool
	transcoded bool
	hash       [32]byte
}

// analyze chunks and tokenises one document, numbering its terms with
// ids from dict; it is safe to run in parallel with one tokenizer per
// goroutine.
func analyze(tk *tokenizer, dict *termDict, rel string, text []byte) *analyzed {
	a := &analyzed{chunks: Split(rel, text), doc: fileKind(rel) == "doc", generated: isGenerated(text)}
	a.html, a.test, a.data = isHTML(rel), isTest(rel), isData(rel)
	internalPath := slices.Contains(strings.Split(rel, "/"), "internal")
	goFile := strings.HasSuffix(rel, ".go")
	var offByDefault, command bool
	if goFile {
		offByDefault, command = goFileFacts(text)
	}
	var tids []uint32
	for _, c := range a.chunks {
		tids = tids[:0]
		tk.eachID([]byte(c.Text), dict, func(id uint32) { tids = append(tids, id<<1) })
		bl := len(tids)
		tk.eachID([]byte(c.Heading), dict, func(id uint32) { tids = append(tids, id<<1|1) })
		hl := len(tids) - bl
		a.freqs = append(a.freqs, countTerms(tids))
		var fl uint32
		if internalPath || goFile && (!exportedDecl(c.Heading) || command && c.Heading != "package main") {
			fl |= chunkInternal
		}
		if offByDefault {
			fl |= chunkOffByDefault
		}
		if goFile && deprecated(c.Text) {
			fl |= chunkDeprecated
		}
		a.flags = append(a.flags, fl)
		a.bodyLens = append(a.bodyLens, uint32(bl))
		a.headLens = append(a.headLens, uint32(hl))
	}
	tids = tids[:0]
	var key []byte
	tk.each([]byte(rel), func(t []byte) {
		key = append(append(key[:0], 0), t...) // path terms are kept apart by a 0x00 prefix
		tids = append(tids, dict.id(key)<<1)
	})
	a.pathTerms = countTerms(tids)
	return a
}

// add appends an analyzed document found at the given paths.
func (b *builder) add(a *analyzed, paths []pathEntry) {
	ci := uint32(len(b.contents))
	c := content{hash: a.hash, doc: a.doc, generated: a.generated, html: a.html, test: a.test, data: a.data, transcoded: a.transcoded, firstChunk: b.nChunks, nChunks: uint32(len(a.chunks)), paths: paths}
	b.contents = append(b.contents, c)
	for i, ch := range a.chunks {
		id := b.nChunks
		b.nChunks++
		headOff, headN := b.addStr(ch.Heading)
		var textOff, textN uint32
		if b.keepText {
			textOff, textN = b.addStr(ch.Text)
		}
		for _, v := range []uint32{ci, uint32(ch.StartLine), uint32(ch.EndLine), uint32(ch.Start), uint32(ch.End), a.bodyLens[i], a.headLens[i], headOff, headN, textOff, textN, a.flags[i]} {
			b.chunks = binary.LittleEndian.AppendUint32(b.chunks, v)
		}
		b.bodyLen += uint64(a.bodyLens[i])
		b.headLen += uint64(a.headLens[i])
		for _, tf := range a.freqs[i] {
			t := b.slot(tf.term)
			b.posts[t] = binary.AppendUvarint(b.posts[t], uint64(id+1-b.last[t]))
			b.posts[t] = binary.AppendUvarint(b.posts[t], uint64(tf.body))
			b.posts[t] = binary.AppendUvarint(b.posts[t], uint64(tf.head))
			b.last[t] = id + 1
		}
	}
	for _, tf := range a.pathTerms {
		t := b.slot(tf.term)
		b.posts[t] = binary.AppendUvarint(b.posts[t], uint64(ci+1-b.last[t]))
		b.posts[t] = binary.AppendUvarint(b.posts[t], uint64(tf.body))
		b.last[t] = ci + 1
	}
}

// addBinary records a file that is not text, with no chunks.
func (b *builder) addBinary(p pathEntry) {
	b.contents = append(b.contents, content{binary: true, firstChunk: b.nChunks, paths: []pathEntry{p}})
}

// addGone records, in a delta, paths of the base that are no longer in
// the tree.
func (b *builder) addGone(rels []string) {
	if len(rels) == 0 {
		return
	}
	c := content{gone: true, firstChunk: b.nChunks}
	for _, rel := range rels {
		c.paths = append(c.paths, pathEntry{rel: rel})
	}
	b.contents = append(b.contents, c)
}

func (b *builder) addStr(s string) (off, n uint32) {
	if s == "" {
		return 0, 0
	}
	off = uint32(len(b.strs))
	b.strs = append(b.strs, s...)
	return off, uint32(len(s))
}

// slot makes room for a term id's postings and returns it.
func (b *builder) slot(id uint32) uint32 {
	if int(id) >= len(b.posts) {
		// Ids are dense and the dictionary knows how many the workers have
		// handed out, so the tables grow to that rather than doubling.
		n := max(int(id)+1, len(b.posts)*5/4, int(b.dict.next.Load()))
		b.posts = append(make([][]byte, 0, n), b.posts...)[:n]
		b.last = append(make([]uint32, 0, n), b.last...)[:n]
	}
	return id
}

// encode returns the segment image, built in memory.
func (b *builder) encode() []byte {
	var buf bytes.Buffer
	buf.Grow(b.imageSize())
	hdr, _ := b.encodeTo(&buf) // a bytes.Buffer does not fail
	out := buf.Bytes()
	copy(out, hdr)
	return out
}

// imageSize is an upper bound on the size of the image encode makes.
func (b *builder) imageSize() int {
	size := headerSize + len(b.chunks) + len(b.strs)
	for id, p := range b.posts {
		if len(p) > 0 {
			size += 8 + len(b.dict.term(uint32(id))) + len(p) + binary.MaxVarintLen32
		}
	}
	for _, c := range b.contents {
		size += 32 + 4*binary.MaxVarintLen32
		for _, p := range c.paths {
			size += len(p.rel) + 3*binary.MaxVarintLen64
		}
	}
	return size + 8 + 4*(size/blockSize+1) // and the block table
}

// encodeTo writes the segment image to w, headerSize zero bytes first,
// and returns the header to put in their place. Postings are prefixed with
// their count so a reader can compute document frequency without decoding
// them. The builder is spent after: what the image holds is let go as it
// is written, so that a cold index never holds the postings twice (in the
// builder and in the image), the peak of its memory.
func (b *builder) encodeTo(w io.Writer) ([]byte, error) {
	// Terms no added document holds (a duplicate's, analysed before it was
	// found to be one) have no postings and are left out.
	var order []uint32
	for id := range b.posts {
		if len(b.posts[id]) > 0 {
			order = append(order, uint32(id))
		}
	}
	slices.SortFunc(order, func(x, y uint32) int { return bytes.Compare(b.dict.term(x), b.dict.term(y)) })
	iw := &imageWriter{w: w, buf: make([]byte, 0, 64<<10)}
	iw.header()
	contentsOff := iw.n
	for _, c := range b.contents {
		iw.write(c.hash[:])
		iw.uvarint(contentFlags(&c))
		iw.uvarint(uint64(c.firstChunk))
		iw.uvarint(uint64(c.nChunks))
		iw.uvarint(uint64(len(c.paths)))
		for _, p := range c.paths {
			iw.uvarint(uint64(len(p.rel)))
			iw.write([]byte(p.rel))
			iw.uvarint(uint64(p.size))
			iw.uvarint(uint64(p.modTime))
		}
	}
	chunkOff := iw.n
	iw.write(b.chunks)
	b.chunks = nil
	strOff := iw.n
	iw.write(b.strs)
	b.strs = nil
	termIdx := iw.n
	var n uint32
	iw.u32(0)
	for _, id := range order {
		n += uint32(len(b.dict.term(id)))
		iw.u32(n)
	}
	termBytes := iw.n
	for _, id := range order {
		iw.write(b.dict.term(id))
	}
	postIdx := iw.n
	counts := make([]uint32, len(order))
	n = 0
	iw.u32(0)
	for k, id := range order {
		counts[k] = uint32(countPostings(b.dict.term(id), b.posts[id]))
		n += uint32(uvarintLen(uint64(counts[k])) + len(b.posts[id]))
		iw.u32(n)
	}
	postBytes := iw.n
	for k, id := range order {
		iw.uvarint(uint64(counts[k]))
		iw.write(b.posts[id])
		b.posts[id] = nil // the image holds them now
	}
	iw.flush()
	tableOff := iw.n
	table := iw.table()
	iw.raw(table)
	hdr := make([]byte, headerSize)
	copy(hdr, segMagic)
	for k, v := range []uint32{segVersion, uint32(len(b.contents)), b.nChunks, uint32(len(order)), uint32(contentsOff),
		uint32(chunkOff), uint32(strOff), uint32(termIdx), uint32(termBytes), uint32(postIdx), uint32(postBytes),
		uint32(b.bodyLen), uint32(b.bodyLen >> 32), uint32(b.headLen), b.options, crc32.Checksum(table, castagnoli), b.baseSum,
		uint32(tableOff)} {
		binary.LittleEndian.PutUint32(hdr[8+4*k:], v)
	}
	binary.LittleEndian.PutUint32(hdr[8+4*18:], crc32.Checksum(hdr[:8+4*18], castagnoli))
	return hdr, iw.err
}

// contentFlags packs a content's booleans as the image stores them.
func contentFlags(c *content) uint64 {
	var flags uint64
	for bit, set := range []bool{c.doc, c.generated, c.html, c.binary, c.test, c.transcoded, c.data, c.gone} {
		if set {
			flags |= 1 << bit
		}
	}
	return flags
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// imageWriter writes a segment image through a buffer, counting its
// offset and summing everything after the header block by block.
type imageWriter struct {
	w      io.Writer
	n      int
	crc    uint32   // of the block being written
	fill   int      // bytes of it written
	blocks []uint32 // sums of the blocks written
	buf    []byte
	err    error
}

// sum adds p, the next bytes of the image, to the block sums.
func (iw *imageWriter) sum(p []byte) {
	for len(p) > 0 {
		k := min(len(p), blockSize-iw.fill)
		iw.crc = crc32.Update(iw.crc, castagnoli, p[:k])
		iw.fill += k
		if iw.fill == blockSize {
			iw.blocks = append(iw.blocks, iw.crc)
			iw.crc, iw.fill = 0, 0
		}
		p = p[k:]
	}
}

// table ends the last block and returns the block table. The buffer must
// be flushed.
func (iw *imageWriter) table() []byte {
	if iw.fill > 0 {
		iw.blocks = append(iw.blocks, iw.crc)
		iw.crc, iw.fill = 0, 0
	}
	out := make([]byte, 0, 4*len(iw.blocks))
	for _, c := range iw.blocks {
		out = binary.LittleEndian.AppendUint32(out, c)
	}
	return out
}

// raw writes p unsummed (the block table).
func (iw *imageWriter) raw(p []byte) {
	if iw.err == nil {
		_, iw.err = iw.w.Write(p)
	}
	iw.n += len(p)
}

// header writes the zeros the header will replace; they are not summed.
func (iw *imageWriter) header() {
	_, iw.err = iw.w.Write(make([]byte, headerSize))
	iw.n = headerSize
}

func (iw *imageWriter) flush() {
	if iw.err == nil && len(iw.buf) > 0 {
		iw.sum(iw.buf)
		_, iw.err = iw.w.Write(iw.buf)
	}
	iw.buf = iw.buf[:0]
}

func (iw *imageWriter) write(p []byte) {
	iw.n += len(p)
	if len(iw.buf)+len(p) > cap(iw.buf) {
		iw.flush()
		if len(p) > cap(iw.buf) {
			if iw.err == nil {
				iw.sum(p)
				_, iw.err = iw.w.Write(p)
			}
			return
		}
	}
	iw.buf = append(iw.buf, p...)
}

func (iw *imageWriter) uvarint(v uint64) {
	if len(iw.buf)+binary.MaxVarintLen64 > cap(iw.buf) {
		iw.flush()
	}
	k := len(iw.buf)
	iw.buf = binary.AppendUvarint(iw.buf, v)
	iw.n += len(iw.buf) - k
}

func (iw *imageWriter) u32(v uint32) {
	if len(iw.buf)+4 > cap(iw.buf) {
		iw.flush()
	}
	iw.buf = binary.LittleEndian.AppendUint32(iw.buf, v)
	iw.n += 4
}

// countPostings counts the entries of an encoded postings list: three
// varints each for chunk postings, two for path postings.
func countPostings(term []byte, p []byte) int {
	per := 3
	if len(term) > 0 && term[0] == 0 {
		per = 2
	}
	n := 0
	for _, c := range p {
		if c < 0x80 {
			n++
		}
	}
	return n / per
}

// malformedPostings marks the segment corrupt for a postings list that
// does not decode (a truncated varint, or an id out of order or range),
// and returns nil, the rest of the list.
func (s *segment) malformedPostings() []byte {
	s.malformed.Store(true)
	return nil
}
