package window

import (
	"bytes"
	"encoding/base64"
	"io"
)

// DefaultPageTokens is the charge for one page of a base64 PDF document
// when neither the catalog nor Inputs.PageTokens sets one. Anthropic
// documents a PDF page at roughly 1,500–3,000 tokens: the page's extracted
// text plus the page rendered as an image. The default takes the top of
// that range so that a dense page is not under-counted; a budget that
// over-counts a sparse page only compacts a little early, while one that
// under-counts overflows the window.
const DefaultPageTokens = 3000

// maxPDFPages caps the page estimate of one document, so that a forged
// "/Count" in garbage cannot claim more than any provider accepts.
const maxPDFPages = 10_000

// pdfPages estimates the page count of a PDF from its base64 text r, in
// one pass and bounded memory: it decodes the base64 as a stream (stopping
// at the first byte that is not base64) and takes the larger of the
// number of page objects ("/Type /Page" not followed by a name character,
// so "/Pages" does not count) and the largest "/Count N" (the page tree's
// total, which is all there is when page objects sit in compressed object
// streams). When neither is found — not a PDF, or every object compressed
// — the document is charged one page. The result is in [1, maxPDFPages].
func pdfPages(r io.Reader) int {
	var s pdfScan
	s.scan(base64.NewDecoder(base64.StdEncoding, r))
	return min(max(s.pageObjects, s.maxCount, 1), maxPDFPages)
}

// pdfScan holds the counts of one pass over decoded PDF bytes.
type pdfScan struct {
	pageObjects int
	maxCount    int
}

// pdfLookahead is how many bytes after a '/' a match may need: the key,
// a short run of white space, and the value.
const pdfLookahead = 64

func (s *pdfScan) scan(r io.Reader) {
	buf := make([]byte, 0, 64<<10+pdfLookahead)
	eof := false
	for !eof {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			eof = true // io.EOF, io.ErrUnexpectedEOF or corrupt base64: scan what was decoded
		}
		pos := 0
		for {
			i := bytes.IndexByte(buf[pos:], '/')
			if i < 0 {
				pos = len(buf)
				break
			}
			at := pos + i
			if !eof && len(buf)-at < pdfLookahead {
				pos = at // decide once more bytes are in
				break
			}
			s.match(buf[at:])
			pos = at + 1
		}
		buf = buf[:copy(buf, buf[pos:])]
	}
}

// match looks at the bytes from one '/' on, at most pdfLookahead of them
// (so that where the stream was cut into chunks never matters).
func (s *pdfScan) match(b []byte) {
	b = b[:min(len(b), pdfLookahead)]
	switch {
	case bytes.HasPrefix(b, []byte("/Type")):
		v := skipPDFSpace(b[len("/Type"):])
		if bytes.HasPrefix(v, []byte("/Page")) && (len(v) == len("/Page") || isPDFDelimiter(v[len("/Page")])) {
			s.pageObjects++
		}
	case bytes.HasPrefix(b, []byte("/Count")):
		v := skipPDFSpace(b[len("/Count"):])
		n, digits := 0, 0
		for _, c := range v {
			if c < '0' || c > '9' || digits == 9 {
				break
			}
			n = n*10 + int(c-'0')
			digits++
		}
		if digits > 0 && (digits == len(v) || isPDFDelimiter(v[digits])) {
			s.maxCount = max(s.maxCount, n)
		}
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
