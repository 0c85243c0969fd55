package window

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"io"
)

// defaultPageTokens is the charge for one PDF page on the Anthropic, OpenAI
// and unknown wires of the embedded catalog (Gemini documents 258 per
// page; see wireRules). Anthropic documents a PDF page at roughly
// 1,500–3,000 tokens: the page's extracted text plus the page rendered as
// an image. The figure takes the top of that range so that a dense page is
// not under-counted; a budget that over-counts a sparse page only compacts
// a little early, while one that under-counts overflows the window.
const defaultPageTokens = 3000

// maxPDFPages caps the page estimate of one document, so that a forged
// "/Count" in garbage cannot claim more than any provider accepts.
const maxPDFPages = 10_000

// Limits on inflating a document's FlateDecode streams. A hostile payload
// can be a small stream that inflates a thousandfold (deflate's ceiling is
// about 1:1032), so the inflated bytes are budgeted against the decoded
// bytes read so far: at any moment at most pdfInflateBase plus
// pdfInflateRatio times the input, and never more than pdfInflateMax in
// all. The work per document therefore stays linear in its size (at most
// 16 inflated bytes per input byte, plus 1 MiB), while real object streams
// — a few times to a few tens of times smaller than their contents, and
// only a small part of a file — fit with room to spare. pdfMaxStreams caps
// the number of object streams inflated, each of which costs a
// decompressor reset however short it is (writers put about 100 objects
// in one, so 16,384 streams hold far more than maxPDFPages pages). When a
// cap stops the inflating, the estimate also takes the object bound (see
// pdfPages), since pages may have been missed.
const (
	pdfInflateBase  = 1 << 20
	pdfInflateRatio = 16
	pdfInflateMax   = 64 << 20
	pdfMaxStreams   = 1 << 14
)

// pdfBufSize is the read buffer of the page scan.
const pdfBufSize = 64 << 10

// pdfPages estimates the page count of a PDF from its base64 text r, in
// one pass and bounded memory. It decodes the base64 as a stream (stopping
// at the first byte that is not base64) and matches at every '/' of the
// decoded bytes: page objects ("/Type /Page" not followed by a name
// character, so "/Pages" does not count) and the largest "/Count N" (the
// page tree's total).
//
// PDF 1.5 and later usually keep the page objects and the page tree in
// compressed object streams. So an object stream whose dictionary names
// /FlateDecode as its (first) filter is inflated as it is read and its
// contents matched the same way. An object stream is a stream with
// /Type /ObjStm, or with the object stream keys /N and /First and no
// other /Type, /Subtype or /Length1 (a writer that left the /Type out).
// Other streams are not inflated: content, images, fonts, cross-reference
// and metadata streams cannot hold objects, so a page object is never
// inside them, and content streams are most of a file's compressed bytes
// (inflating them too made the scan about ten times slower; BENCHMARKS.md,
// window section).
//
// The estimate is the larger of the number of page objects and the
// largest /Count. When neither is found (an encrypted file whose object
// streams cannot be inflated, an unsupported filter), or when a cap cut
// the inflating short, the largest "/Size N" of the trailer or
// cross-reference stream is taken as well: it is the number of objects in
// the file, and every page is an object, so it never under-counts a whole
// file (it over-counts by the objects per page, typically 3–10). A size
// based guess (one page per so many KB) is not used: a page takes from a
// few hundred bytes (text in object streams) to megabytes (scans), so any
// ratio either under-counts text or over-counts scans a hundredfold. With
// no /Size either — not a PDF, or a truncated one, which a provider
// rejects — the document is charged one page. The result is in
// [1, maxPDFPages].
func pdfPages(r io.Reader) int {
	return pdfScanDoc(r, pdfBufSize).pages()
}

// pdfScanDoc runs the page scan with a read buffer of size bytes (at least
// 2*pdfLookahead; tests vary it to show that chunking never matters).
func pdfScanDoc(r io.Reader, size int) *pdfDoc {
	d := &pdfDoc{br: bufio.NewReaderSize(base64.NewDecoder(base64.StdEncoding, r), size), prev: '\n'}
	d.src.d = d
	d.run()
	return d
}

// pdfCounts are the matches in one kind of bytes.
type pdfCounts struct {
	pageObjects int
	maxCount    int
	maxSize     int
}

// pdfLookahead is how many bytes after a '/' a match may need: the key,
// a short run of white space, and the value.
const pdfLookahead = 64

// match looks at the bytes from one '/' on, at most pdfLookahead of them
// (so that where the stream was cut into chunks never matters).
func (c *pdfCounts) match(b []byte) {
	b = b[:min(len(b), pdfLookahead)]
	switch {
	case bytes.HasPrefix(b, []byte("/Type")):
		if pdfName(skipPDFSpace(b[len("/Type"):]), "/Page") {
			c.pageObjects++
		}
	case bytes.HasPrefix(b, []byte("/Count")):
		if n, ok := pdfNumber(skipPDFSpace(b[len("/Count"):])); ok {
			c.maxCount = max(c.maxCount, n)
		}
	case pdfName(b, "/Size"):
		if n, ok := pdfNumber(skipPDFSpace(b[len("/Size"):])); ok {
			c.maxSize = max(c.maxSize, n)
		}
	}
}

// pdfNumber reads a non-negative integer of at most 9 digits that ends
// the bytes or is followed by a delimiter.
func pdfNumber(v []byte) (int, bool) {
	n, digits := 0, 0
	for _, c := range v {
		if c < '0' || c > '9' || digits == 9 {
			break
		}
		n = n*10 + int(c-'0')
		digits++
	}
	return n, digits > 0 && (digits == len(v) || isPDFDelimiter(v[digits]))
}

// pdfName reports whether b starts with the name (or key) n, ended by a
// delimiter or the end of b.
func pdfName(b []byte, n string) bool {
	return len(b) >= len(n) && string(b[:len(n)]) == n && (len(b) == len(n) || isPDFDelimiter(b[len(n)]))
}

// pdfMatcher matches at each '/' of bytes written to it in pieces,
// keeping pdfLookahead bytes back until what follows them is known.
type pdfMatcher struct {
	c   pdfCounts
	buf []byte
}

const pdfMatcherSize = 16<<10 + 2*pdfLookahead

func (m *pdfMatcher) write(p []byte) {
	if m.buf == nil {
		m.buf = make([]byte, 0, pdfMatcherSize)
	}
	for len(p) > 0 {
		n := copy(m.buf[len(m.buf):pdfMatcherSize-pdfLookahead], p)
		m.buf = m.buf[:len(m.buf)+n]
		p = p[n:]
		if len(m.buf) == pdfMatcherSize-pdfLookahead {
			m.drain(len(m.buf) - pdfLookahead)
		}
	}
}

// drain matches at each '/' before limit and keeps the bytes from limit on.
func (m *pdfMatcher) drain(limit int) {
	for pos := 0; ; {
		i := bytes.IndexByte(m.buf[pos:limit], '/')
		if i < 0 {
			break
		}
		m.c.match(m.buf[pos+i:])
		pos += i + 1
	}
	m.buf = m.buf[:copy(m.buf, m.buf[limit:])]
}

// end matches what is left, with next as the bytes that follow it.
func (m *pdfMatcher) end(next []byte) {
	n := len(m.buf)
	m.buf = append(m.buf, next[:min(len(next), pdfLookahead)]...)
	m.drain(n)
	m.buf = m.buf[:0]
}

// pdfDict is what the current object's dictionary says about its stream.
type pdfDict struct {
	flate    bool // /Filter /FlateDecode or /Filter [/FlateDecode …]
	objStm   bool // /Type /ObjStm
	n, first bool // /N and /First, the keys of an object stream
	other    bool // another kind: /Type (not /ObjStm), /Subtype, /Length1
}

func (d *pdfDict) key(b []byte) {
	b = b[:min(len(b), pdfLookahead)]
	switch {
	case pdfName(b, "/Filter"):
		v := skipPDFSpace(b[len("/Filter"):])
		if len(v) > 0 && v[0] == '[' {
			v = skipPDFSpace(v[1:])
		}
		if pdfName(v, "/FlateDecode") {
			d.flate = true
		}
	case pdfName(b, "/Type"):
		if pdfName(skipPDFSpace(b[len("/Type"):]), "/ObjStm") {
			d.objStm = true
		} else {
			d.other = true
		}
	case pdfName(b, "/Subtype"), pdfName(b, "/Length1"):
		d.other = true
	case pdfName(b, "/N"):
		d.n = true
	case pdfName(b, "/First"):
		d.first = true
	}
}

func (d pdfDict) inflatable() bool {
	return d.flate && (d.objStm || d.n && d.first && !d.other)
}

// pdfDoc is the state of one document's scan.
type pdfDoc struct {
	br   *bufio.Reader
	prev byte  // the last byte consumed
	read int64 // decoded bytes consumed

	outside  pdfCounts  // matches outside inflated stream bodies
	body     pdfMatcher // matches in the compressed bytes of inflated streams
	inflated pdfMatcher // matches in the inflated bytes

	dict     pdfDict
	streams  int   // streams inflated
	inflates int64 // bytes inflated
	cut      bool  // a cap stopped the inflating

	src pdfBody
	zr  io.ReadCloser
	out []byte
}

// pages combines the counts into the estimate (see pdfPages).
func (d *pdfDoc) pages() int {
	// Compressed bytes rarely hold a match by chance, but a stored
	// (uncompressed) deflate block holds the same bytes as its inflated
	// form: take the larger of the two, not their sum.
	objects := d.outside.pageObjects + max(d.body.c.pageObjects, d.inflated.c.pageObjects)
	n := max(objects, d.outside.maxCount, d.body.c.maxCount, d.inflated.c.maxCount)
	if n == 0 || d.cut {
		n = max(n, d.outside.maxSize, d.body.c.maxSize, d.inflated.c.maxSize)
	}
	return min(max(n, 1), maxPDFPages)
}

func (d *pdfDoc) run() {
	size := d.br.Size()
	for {
		win, err := d.br.Peek(size)
		eof := err != nil // io.EOF or corrupt base64: scan what was decoded
		limit := len(win)
		if !eof {
			limit -= pdfLookahead // decide once the bytes after are in
		}
		next, inflate := d.events(win, limit)
		d.consume(win[:next])
		if inflate {
			d.inflate()
			continue
		}
		if eof {
			return
		}
	}
}

func (d *pdfDoc) consume(b []byte) {
	if len(b) > 0 {
		d.prev = b[len(b)-1]
		d.read += int64(len(b))
		_, _ = d.br.Discard(len(b)) // b is buffered: cannot fail
	}
}

// events handles, in order, every '/', "obj" and "stream" that starts in
// win[:limit]. It returns limit, or the start of a stream body to inflate.
func (d *pdfDoc) events(win []byte, limit int) (next int, inflate bool) {
	slash := indexFrom(win, 0, "/")
	obj := indexFrom(win, 0, "obj")
	stream := indexFrom(win, 0, "stream")
	for {
		at := min(slash, obj, stream)
		if at >= limit {
			return limit, false
		}
		switch at {
		case slash:
			d.outside.match(win[at:])
			d.dict.key(win[at:])
			slash = indexFrom(win, at+1, "/")
		case obj:
			// "obj" and "endobj" start and end an object: a new dictionary.
			if at+3 == len(win) || isPDFDelimiter(win[at+3]) {
				d.dict = pdfDict{}
			}
			obj = indexFrom(win, at+1, "obj")
		default:
			stream = indexFrom(win, at+1, "stream")
			body, ok := streamBody(win, at, d.prev)
			dict := d.dict
			d.dict = pdfDict{} // also after "endstream"
			if ok && dict.inflatable() {
				return body, true
			}
		}
	}
}

// indexFrom is the index of sep in b at or after from, or len(b).
func indexFrom(b []byte, from int, sep string) int {
	var i int
	if len(sep) == 1 {
		i = bytes.IndexByte(b[from:], sep[0])
	} else {
		i = bytes.Index(b[from:], []byte(sep))
	}
	if i < 0 {
		return len(b)
	}
	return from + i
}

// streamBody reports where the body of a stream starts when the "stream"
// at win[at:] is the keyword: after a delimiter (not "endstream") and
// followed by an end of line (CR LF or LF; a lone CR is tolerated).
func streamBody(win []byte, at int, prev byte) (int, bool) {
	if at > 0 {
		prev = win[at-1]
	}
	if !isPDFDelimiter(prev) {
		return 0, false
	}
	i := at + len("stream")
	switch {
	case i < len(win) && win[i] == '\n':
		return i + 1, true
	case i+1 < len(win) && win[i] == '\r' && win[i+1] == '\n':
		return i + 2, true
	case i < len(win) && win[i] == '\r':
		return i + 1, true
	}
	return 0, false
}

// room is how many more bytes may be inflated now.
func (d *pdfDoc) room() int64 {
	return min(pdfInflateMax, pdfInflateBase+pdfInflateRatio*d.read) - d.inflates
}

// inflate inflates the stream whose body starts at the reader, matching
// its inflated bytes, until it ends, fails or meets a cap. The compressed
// bytes it consumed are matched as raw bytes (so inflating never loses a
// match the raw scan would find); the main loop goes on after them.
func (d *pdfDoc) inflate() {
	if d.streams >= pdfMaxStreams || d.room() <= 0 {
		d.cut = true
		return
	}
	d.streams++
	hdr, _ := d.br.Peek(2)
	if len(hdr) < 2 || hdr[0]&0x0f != 8 || hdr[0]>>4 > 7 || (uint(hdr[0])<<8|uint(hdr[1]))%31 != 0 || hdr[1]&0x20 != 0 {
		return // not a zlib stream (or one with a preset dictionary): scanned as raw bytes
	}
	if d.zr == nil {
		zr, err := zlib.NewReader(&d.src)
		if err != nil {
			d.endBody()
			return
		}
		d.zr, d.out = zr, make([]byte, 32<<10)
	} else if err := d.zr.(zlib.Resetter).Reset(&d.src, nil); err != nil {
		d.endBody()
		return
	}
	for {
		room := d.room()
		if room <= 0 {
			d.cut = true
			break
		}
		n, err := d.zr.Read(d.out[:min(int64(len(d.out)), room)])
		d.inflates += int64(n)
		d.inflated.write(d.out[:n])
		if err != nil {
			break // the end, or a corrupt or truncated stream: keep what inflated
		}
	}
	d.inflated.end(nil) // matches do not run on into the next stream
	d.endBody()
}

// endBody matches the consumed compressed bytes still held back, with the
// bytes that follow them.
func (d *pdfDoc) endBody() {
	d.body.write(d.src.rec)
	d.src.rec = d.src.rec[:0]
	next, _ := d.br.Peek(pdfLookahead)
	d.body.end(next)
}

// pdfBody is the reader the decompressor reads a stream body through: it
// counts and keeps the bytes consumed, which are matched as raw bytes.
type pdfBody struct {
	d   *pdfDoc
	rec []byte
}

func (b *pdfBody) ReadByte() (byte, error) {
	c, err := b.d.br.ReadByte()
	if err != nil {
		return 0, err
	}
	b.keep(c)
	return c, nil
}

func (b *pdfBody) Read(p []byte) (int, error) {
	n, err := b.d.br.Read(p)
	for _, c := range p[:n] {
		b.keep(c)
	}
	return n, err
}

func (b *pdfBody) keep(c byte) {
	b.d.prev = c
	b.d.read++
	b.rec = append(b.rec, c)
	if len(b.rec) == 4<<10 {
		b.d.body.write(b.rec)
		b.rec = b.rec[:0]
	}
}

func skipPDFSpace(b []byte) []byte {
	for len(b) > 0 && isPDFSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// isPDFSpace reports PDF white space (ISO 32000 §7.2.3).
func isPDFSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

// isPDFDelimiter reports a byte that ends a PDF name or number.
func isPDFDelimiter(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return isPDFSpace(c)
}
