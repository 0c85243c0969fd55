package window

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// objStmPDF describes a PDF 1.5+ file as modern writers produce it: the
// catalog, the page tree and every page object compressed in object
// streams (/Type /ObjStm, /Filter /FlateDecode), the page contents in
// Flate streams of their own, and a compressed cross-reference stream
// instead of an xref table. Nothing about the pages is visible in the
// file's raw bytes.
type objStmPDF struct {
	pages     int
	perStream int  // objects per object stream (qpdf writes 100)
	text      int  // bytes of text on each page, in its content stream
	noCount   bool // leave /Count out of the page tree
	stored    bool // object streams deflated without compression (stored blocks)
	scramble  bool // object stream bodies replaced by random bytes, as encryption leaves them
	// before is written as is after the header (extra objects for a test).
	before string
}

// pdfWords make page text that compresses about as well as prose.
var pdfWords = strings.Fields("the of and to in is was for on that with as by at from this be are or an it " +
	"window page token budget model request document stream object compressed estimate context provider " +
	"history message system tool result image count scan byte safe never under over limit cap")

func (p objStmPDF) build() []byte {
	per := p.perStream
	if per == 0 {
		per = 100
	}
	rng := rand.New(rand.NewPCG(uint64(p.pages), uint64(p.text)))
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	b.WriteString(p.before)
	type entry struct{ kind, a, c int } // a cross-reference entry (ISO 32000 §7.5.8.3)
	xref := map[int]entry{}
	stream := func(num int, dict string, data []byte) {
		xref[num] = entry{1, b.Len(), 0}
		fmt.Fprintf(&b, "%d 0 obj\n<< %s /Length %d /Filter /FlateDecode >>\nstream\n", num, dict, len(data))
		b.Write(data)
		b.WriteString("\nendstream\nendobj\n")
	}
	n := p.pages
	page, content := func(i int) int { return 3 + i }, func(i int) int { return 3 + n + i }
	for i := range n {
		var t strings.Builder
		for y := 720; t.Len() < p.text; y -= 14 {
			fmt.Fprintf(&t, "BT /F1 11 Tf 72 %d Td (", y)
			for range 12 {
				t.WriteString(pdfWords[rng.IntN(len(pdfWords))])
				t.WriteByte(' ')
			}
			t.WriteString(") Tj ET\n")
		}
		stream(content(i), "", deflate([]byte(t.String()), zlib.DefaultCompression))
	}
	type object struct {
		num  int
		body string
	}
	kids := make([]string, n)
	objs := []object{{1, "<< /Type /Catalog /Pages 2 0 R >>"}}
	for i := range n {
		kids[i] = fmt.Sprintf("%d 0 R", page(i))
		objs = append(objs, object{page(i), fmt.Sprintf(
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>",
			3+2*n, content(i))})
	}
	tree := fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n)
	if p.noCount {
		tree = fmt.Sprintf("<< /Type /Pages /Kids [%s] >>", strings.Join(kids, " "))
	}
	objs = append(objs, object{2, tree}, object{3 + 2*n, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"})
	next := 4 + 2*n
	level := zlib.BestCompression
	if p.stored {
		level = zlib.NoCompression
	}
	for len(objs) > 0 {
		chunk := objs[:min(per, len(objs))]
		objs = objs[len(chunk):]
		num := next
		next++
		var head, body strings.Builder
		for i, o := range chunk {
			fmt.Fprintf(&head, "%d %d ", o.num, body.Len())
			body.WriteString(o.body)
			body.WriteByte('\n')
			xref[o.num] = entry{2, num, i}
		}
		data := deflate([]byte(head.String()+body.String()), level)
		if p.scramble {
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
		}
		stream(num, fmt.Sprintf("/Type /ObjStm /N %d /First %d", len(chunk), head.Len()), data)
	}
	size := next + 1
	xref[next] = entry{1, b.Len(), 0}
	start := b.Len()
	var rows []byte
	for num := range size {
		e := xref[num] // object 0 is the free list's head: type 0
		rows = append(rows, byte(e.kind))
		rows = binary.BigEndian.AppendUint32(rows, uint32(e.a))
		rows = binary.BigEndian.AppendUint16(rows, uint16(e.c))
	}
	stream(next, fmt.Sprintf("/Type /XRef /Size %d /W [1 4 2] /Root 1 0 R", size), deflate(rows, zlib.BestCompression))
	fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", start)
	return b.Bytes()
}

// objects is the number of objects the file's cross-reference stream
// declares (/Size): the objects written plus object 0.
func (p objStmPDF) objects() int {
	per := p.perStream
	if per == 0 {
		per = 100
	}
	compressed := 3 + p.pages
	return 4 + 2*p.pages + (compressed+per-1)/per + 1
}

func deflate(b []byte, level int) []byte {
	var out bytes.Buffer
	w, err := zlib.NewWriterLevel(&out, level)
	if err != nil {
		panic(err)
	}
	_, _ = w.Write(b)
	_ = w.Close()
	return out.Bytes()
}

// bomb is a zlib stream of about mib KiB that inflates to mib MiB of
// zeros (mib >= 2): one compressed mebibyte of zeros repeated, as deflate
// blocks may be, and a valid checksum.
func bomb(mib int) []byte {
	var b bytes.Buffer
	w, err := zlib.NewWriterLevel(&b, zlib.BestCompression)
	if err != nil {
		panic(err)
	}
	zeros := make([]byte, 1<<20)
	_, _ = w.Write(zeros)
	_ = w.Flush()
	first := b.Len()
	_, _ = w.Write(zeros)
	_ = w.Flush() // a block that, after zeros, inflates to 1 MiB of zeros
	block := bytes.Clone(b.Bytes()[first:])
	for range mib - 2 {
		b.Write(block)
	}
	b.Write([]byte{1, 0, 0, 0xff, 0xff}) // an empty final stored block
	// Adler-32 of n zeros: A = 1, B = n mod 65521.
	return binary.BigEndian.AppendUint32(b.Bytes(), uint32((mib<<20)%65521)<<16|1)
}

func scanOf(b []byte) *pdfDoc {
	return pdfScanDoc(strings.NewReader(base64.StdEncoding.EncodeToString(b)), pdfBufSize)
}

// pagesBothWays is the page estimate of b, checked to be the same with a
// small read buffer (so that chunk boundaries fall everywhere).
func pagesBothWays(t *testing.T, b []byte) int {
	t.Helper()
	enc := base64.StdEncoding.EncodeToString(b)
	got := pdfPages(strings.NewReader(enc))
	if small := pdfScanDoc(strings.NewReader(enc), 2*pdfLookahead).pages(); small != got {
		t.Fatalf("%d pages with a small buffer, %d with the default", small, got)
	}
	return got
}

func TestPDFPagesInObjectStreams(t *testing.T) {
	for _, tc := range []objStmPDF{
		{pages: 1},
		{pages: 3, text: 500},
		{pages: 50, perStream: 100, text: 2000},
		{pages: 250, perStream: 100, text: 100}, // three object streams
		{pages: 250, perStream: 7, noCount: true},
		{pages: 40, noCount: true, stored: true}, // stored blocks: page objects in the raw bytes too, counted once
	} {
		pdf := tc.build()
		if !tc.stored {
			if raw := referencePages(pdf); raw != 1 {
				t.Fatalf("%+v: the raw bytes already show %d pages; the test does not test inflating", tc, raw)
			}
		}
		if got := pagesBothWays(t, pdf); got != tc.pages {
			t.Errorf("%d pages in object streams (%d per stream, count %v, stored %v): estimated %d",
				tc.pages, tc.perStream, !tc.noCount, tc.stored, got)
		}
	}
}

// Which Flate streams are inflated: object streams, by /Type /ObjStm or
// by their /N and /First keys, with the filter alone or first in an
// array; not a content stream, an image or other typed stream, a font
// program, a stream whose first filter is not Flate, or one that is not
// zlib data.
func TestPDFPagesWhichStreamsAreInflated(t *testing.T) {
	pages := deflate([]byte("1 0 2 18 3 36 << /Type /Page >> << /Type /Page >> << /Type /Page >>"), zlib.BestCompression)
	for dict, want := range map[string]int{
		"/Type /ObjStm /N 3 /First 13 /Filter /FlateDecode":                   3,
		"/Filter /FlateDecode /Type/ObjStm":                                   3,
		"/Type /ObjStm /Filter[/FlateDecode]":                                 3,
		"/Type /ObjStm /Filter [ /FlateDecode /DCTDecode ]":                   3,
		"/Type /ObjStm /DecodeParms << /Predictor 12 >> /Filter /FlateDecode": 3,
		"/N 3 /First 13 /Filter /FlateDecode":                                 3,
		"/N 3 /Filter /FlateDecode":                                           1, // an ICC profile
		"/Filter /FlateDecode":                                                1, // a content stream
		"/Type /XObject /Subtype /Image /Filter /FlateDecode":                 1,
		"/Subtype /Image /N 3 /First 13 /Filter /FlateDecode":                 1,
		"/Type /XRef /N 3 /First 13 /Filter /FlateDecode":                     1,
		"/Type /EmbeddedFile /Filter /FlateDecode":                            1,
		"/Length1 3000 /N 3 /First 13 /Filter /FlateDecode":                   1,
		"/Type /ObjStm /Filter [/ASCII85Decode /FlateDecode]":                 1,
		"/Type /ObjStm /Filter /FlateDecodeX":                                 1,
		"/Type /ObjStmX /Filter /FlateDecode":                                 1,
		"/Type /ObjStm /Length 40":                                            1,
	} {
		for _, eol := range []string{"\n", "\r\n", "\r"} {
			pdf := fmt.Sprintf("%%PDF-1.7\n1 0 obj\n<< %s >>\nstream%s%s\nendstream\nendobj\n", dict, eol, pages)
			if got := pagesBothWays(t, []byte(pdf)); got != want {
				t.Errorf("<< %s >> stream%q: %d pages, want %d", dict, eol, got, want)
			}
		}
	}
	// The dictionary of one object does not carry over to the next one.
	pdf := fmt.Sprintf("1 0 obj << /Type /ObjStm /Filter /FlateDecode >> endobj 2 0 obj << /Length 9 >> stream\n%s\nendstream endobj", pages)
	if got := pagesBothWays(t, []byte(pdf)); got != 1 {
		t.Errorf("filter of an earlier object applied: %d pages", got)
	}
	pdf = fmt.Sprintf("1 0 obj << /Type /XObject /Subtype /Image >> endobj 2 0 obj << /Type /ObjStm /Filter /FlateDecode >> stream\n%s\nendstream endobj", pages)
	if got := pagesBothWays(t, []byte(pdf)); got != 3 {
		t.Errorf("type of an earlier object applied: %d pages", got)
	}
	// "endstream" is not a stream keyword; "stream" glued to a name is not either.
	pdf = fmt.Sprintf("<< /Type /ObjStm /Filter /FlateDecode >> endstream\n%s", pages)
	if got := pagesBothWays(t, []byte(pdf)); got != 1 {
		t.Errorf("endstream opened a stream: %d pages", got)
	}
	pdf = fmt.Sprintf("<< /Type /ObjStm /Filter /FlateDecode /Xstream\n%s", pages)
	if got := pagesBothWays(t, []byte(pdf)); got != 1 {
		t.Errorf("/Xstream opened a stream: %d pages", got)
	}
}

// A stream that is corrupt or cut short is inflated as far as it goes,
// and the scan goes on after it.
func TestPDFPagesCorruptStreams(t *testing.T) {
	const n = 250 // page objects in three object streams of 100 objects: 99, 100, 51
	spec := objStmPDF{pages: n, perStream: 100, noCount: true}
	pdf := spec.build()
	objStms := indexAll(pdf, []byte("/Type /ObjStm"))
	if len(objStms) != 3 {
		t.Fatalf("%d object streams", len(objStms))
	}
	bodyOf := func(i int) int {
		return objStms[i] + bytes.Index(pdf[objStms[i]:], []byte("stream\n")) + len("stream\n")
	}

	// A bad zlib header: that stream is not inflated, the others are.
	bad := bytes.Clone(pdf)
	bad[bodyOf(1)] = 0x79
	if got := pagesBothWays(t, bad); got != n-100 {
		t.Errorf("bad header in the second object stream: %d pages, want %d", got, n-100)
	}
	// A wrong checksum: everything inflated before it counts.
	bad = bytes.Clone(pdf)
	end := bodyOf(1) + bytes.Index(pdf[bodyOf(1):], []byte("\nendstream"))
	bad[end-1] ^= 0xff
	if got := pagesBothWays(t, bad); got != n {
		t.Errorf("bad checksum: %d pages, want %d", got, n)
	}
	// Garbage in the middle of the deflate data: some or none of that
	// stream's pages, never a panic, and the other streams count.
	for _, at := range []int{3, 40, 200} {
		bad = bytes.Clone(pdf)
		for i := range 16 {
			bad[bodyOf(1)+at+i] = byte(i * 37)
		}
		if got := pagesBothWays(t, bad); got < n-100 || got > n {
			t.Errorf("garbage at %d of the second object stream: %d pages, want %d to %d", at, got, n-100, n)
		}
	}
	// The file cut in the middle of the last object stream: the streams
	// before it count, the cut one as far as it inflates.
	cut := pdf[:bodyOf(2)+(end-bodyOf(1))/2]
	if got := pagesBothWays(t, cut); got < 199 || got > n {
		t.Errorf("cut file: %d pages, want 199 to %d", got, n)
	}
	// The file cut right after "stream" of each object stream.
	for i := range objStms {
		if got := pagesBothWays(t, pdf[:bodyOf(i)]); got != []int{1, 99, 199}[i] {
			t.Errorf("cut at object stream %d: %d pages", i, got)
		}
	}
}

func indexAll(b, sep []byte) []int {
	var at []int
	for i := 0; ; {
		j := bytes.Index(b[i:], sep)
		if j < 0 {
			return at
		}
		at = append(at, i+j)
		i += j + 1
	}
}

// Object streams that cannot be inflated (an encrypted file) leave only
// the cross-reference stream's /Size: the object count, which every page
// is part of.
func TestPDFPagesObjectBound(t *testing.T) {
	spec := objStmPDF{pages: 30, scramble: true}
	pdf := spec.build()
	if !bytes.Contains(pdf, fmt.Appendf(nil, "/Size %d ", spec.objects())) {
		t.Fatalf("no /Size %d in the file", spec.objects())
	}
	if got := pagesBothWays(t, pdf); got != spec.objects() || got < spec.pages {
		t.Errorf("unreadable object streams: %d pages, want the %d objects", got, spec.objects())
	}
	// Page objects or a /Count found: /Size is not used.
	for _, s := range []string{"trailer << /Size 500 >> /Count 4", "/Size 500 /Type /Page", "/Size 0"} {
		if got := pagesBothWays(t, []byte(s)); got != max(1, strings.Count(s, "/Page"), 4*strings.Count(s, "/Count")) {
			t.Errorf("%q: %d pages", s, got)
		}
	}
	if got := pagesBothWays(t, []byte("trailer << /Size 500 >>")); got != 500 {
		t.Errorf("/Size alone: %d pages", got)
	}
	if got := pagesBothWays(t, []byte("/Size 99999999")); got != maxPDFPages {
		t.Errorf("huge /Size: %d pages", got)
	}
}

func TestBombIsReal(t *testing.T) {
	zr, err := zlib.NewReader(bytes.NewReader(bomb(5)))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, zr)
	if err != nil || n != 5<<20 {
		t.Fatalf("bomb(5) inflates to %d bytes, %v", n, err)
	}
}

// A stream that inflates a thousandfold is cut at the budget: the bytes
// inflated stay within pdfInflateBase plus pdfInflateRatio times the
// input read so far, and since pages may have been missed the object
// bound applies. The budget grows again with the input after it, so a
// bomb cannot starve the object streams that follow.
func TestPDFPagesBomb(t *testing.T) {
	const mib = 256
	z := bomb(mib)
	obj := fmt.Sprintf("9 0 obj\n<< /Type /ObjStm /N 1 /First 0 /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream\nendobj\n", len(z), z)
	spec := objStmPDF{pages: 12, noCount: true, before: obj}
	pdf := spec.build()

	start := time.Now()
	d := scanOf(pdf)
	elapsed := time.Since(start)
	t.Logf("%d-byte stream claiming %d MiB: %d bytes inflated in %v", len(z), mib, d.inflates, elapsed)
	if limit := int64(pdfInflateBase + pdfInflateRatio*len(pdf)); d.inflates > limit || d.inflates < pdfInflateBase {
		t.Errorf("inflated %d bytes, budget %d", d.inflates, limit)
	}
	if !d.cut || d.inflated.c.pageObjects != spec.pages {
		t.Errorf("cut %v, %d page objects inflated after the bomb", d.cut, d.inflated.c.pageObjects)
	}
	if got := d.pages(); got != spec.objects() {
		t.Errorf("%d pages, want the object bound %d", got, spec.objects())
	}
	// A bomb alone, no /Size: what was found, at least one page.
	if d := scanOf([]byte(obj)); !d.cut || d.pages() != 1 || d.inflates > int64(pdfInflateBase+pdfInflateRatio*len(obj)) {
		t.Errorf("bomb alone: cut %v, %d pages, %d bytes inflated", d.cut, d.pages(), d.inflates)
	}
}

// The total inflated is capped however many streams share the budget, and
// the number of streams inflated is capped too.
func TestPDFPagesInflateCaps(t *testing.T) {
	var b bytes.Buffer
	z := bomb(2)
	for range 40 {
		fmt.Fprintf(&b, "<< /Type /ObjStm /Filter /FlateDecode >> stream\n%s\nendstream endobj\n", z)
	}
	d := scanOf(b.Bytes())
	if limit := int64(pdfInflateBase + pdfInflateRatio*b.Len()); !d.cut || d.inflates > limit {
		t.Errorf("40 small bombs: cut %v, %d bytes inflated, budget %d", d.cut, d.inflates, limit)
	}
	if testing.Short() {
		return
	}
	tiny := deflate([]byte("/Type /Page"), zlib.BestCompression)
	b.Reset()
	for range pdfMaxStreams + 10 {
		fmt.Fprintf(&b, "<</Type/ObjStm/Filter/FlateDecode>>stream\n%s\nendstream endobj ", tiny)
	}
	d = scanOf(b.Bytes())
	if d.streams != pdfMaxStreams || !d.cut || d.inflated.c.pageObjects != pdfMaxStreams {
		t.Errorf("%d streams: %d inflated, cut %v, %d page objects", pdfMaxStreams+10, d.streams, d.cut, d.inflated.c.pageObjects)
	}
}
