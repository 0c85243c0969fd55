package window

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/tokens"
)

// testCharges are the charges the estimator tests use.
var testCharges = charges{image: 1600, page: defaultPageTokens}

// buildPDF returns a small uncompressed PDF with the given number of
// pages, each carrying a content stream padded with pad bytes of text.
// The page tree, catalog, xref table and trailer are real, so the page
// count is known independently of the estimator.
func buildPDF(pages, pad int) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [0 << /S /D >>] >> >>")
	kids := make([]string, pages)
	for i := range pages {
		kids[i] = fmt.Sprintf("%d 0 R", 3+2*i)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages))
	for i := range pages {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R >>", 4+2*i))
		text := fmt.Sprintf("BT /F1 12 Tf 72 720 Td (page %d %s) Tj ET", i+1, strings.Repeat("x", pad))
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(text), text))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

func pagesOf(b []byte) int {
	return pdfPages(strings.NewReader(base64.StdEncoding.EncodeToString(b)))
}

func TestPDFPages(t *testing.T) {
	for _, n := range []int{1, 2, 7, 40} {
		if got := pagesOf(buildPDF(n, 10)); got != n {
			t.Errorf("%d-page PDF: estimated %d pages", n, got)
		}
	}
	cases := map[string]struct {
		pdf  string
		want int
	}{
		// Page objects out of sight (in an object stream that cannot be
		// inflated): the page tree's /Count gives the total.
		"count only":       {"%PDF-1.7\n2 0 obj << /Type/Pages /Kids [5 0 R] /Count 12>> endobj", 12},
		"no white space":   {"<</Type/Page/Parent 2 0 R>><</Type/Page>>", 2},
		"page at the end":  {"<< /Type /Page", 1},
		"pages not a page": {"<< /Type /Pages /Kids [] >> << /Type /PageLabel >>", 1},
		"negative count":   {"<< /Title (x) /Count -4 >>", 1},
		"absurd count":     {"/Count 999999999", maxPDFPages},
		"ten digits":       {"/Count 1234567890 ", 1},
		"not a pdf":        {"hello, world", 1},
		"empty":            {"", 1},
	}
	for name, tc := range cases {
		if got := pagesOf([]byte(tc.pdf)); got != tc.want {
			t.Errorf("%s: %d pages, want %d", name, got, tc.want)
		}
	}
	for name, text := range map[string]string{
		"not base64":  "%%% not base64 at all %%%",
		"url-safe":    "-_-_-_-_",
		"bad padding": "QQ=A" + base64.StdEncoding.EncodeToString(buildPDF(5, 0)),
		"empty":       "",
	} {
		if got := pdfPages(strings.NewReader(text)); got != 1 {
			t.Errorf("%s: %d pages, want 1", name, got)
		}
	}
	// Base64 wrapped in lines (MIME style) decodes the same.
	enc := base64.StdEncoding.EncodeToString(buildPDF(4, 100))
	var wrapped strings.Builder
	for i := 0; i < len(enc); i += 76 {
		wrapped.WriteString(enc[i:min(i+76, len(enc))])
		wrapped.WriteString("\r\n")
	}
	if got := pdfPages(strings.NewReader(wrapped.String())); got != 4 {
		t.Errorf("wrapped base64: %d pages, want 4", got)
	}
}

// A match that straddles the scanner's chunk boundary is still found, at
// every offset around it.
func TestPDFPagesAcrossChunkBoundaries(t *testing.T) {
	const chunk = 64<<10 + pdfLookahead
	for off := chunk - pdfLookahead - 16; off < chunk+16; off++ {
		pdf := append(bytes.Repeat([]byte("x"), off), "/Type /Page /Type\n/Page>> /Count 3 "...)
		if got := pagesOf(pdf); got != 3 {
			t.Fatalf("offset %d: %d pages, want 3", off, got)
		}
		pdf = append(bytes.Repeat([]byte("x"), off), "/Type /Page>> /Type /Page /Type /Pages"...)
		if got := pagesOf(pdf); got != 2 {
			t.Fatalf("offset %d: %d pages, want 2", off, got)
		}
	}
}

// referencePages is the page scan before object streams were inflated:
// the same match at every '/' of the whole decoded buffer, nothing
// inflated, no /Size bound.
func referencePages(b []byte) int {
	var c pdfCounts
	for i := range b {
		if b[i] == '/' {
			c.match(b[i:])
		}
	}
	return min(max(c.pageObjects, c.maxCount, 1), maxPDFPages)
}

// FuzzPDFPages: any decoded bytes, never a panic, a result in
// [1, maxPDFPages], never fewer pages than the scan without inflating
// finds, and the same result whatever the read buffer's size.
func FuzzPDFPages(f *testing.F) {
	f.Add(buildPDF(3, 0))
	f.Add([]byte("/Type/Page/Type /Pages/Count 9"))
	f.Add([]byte("/Count 999999999999"))
	f.Add(append(bytes.Repeat([]byte(" "), 100), "/Type /Page"...)) // chunk boundaries: TestPDFPagesAcrossChunkBoundaries
	f.Add(objStmPDF{pages: 3, perStream: 2, text: 40}.build())
	f.Add(objStmPDF{pages: 2, perStream: 10, noCount: true, stored: true}.build())
	f.Add([]byte("1 0 obj<</N 2/First 4/Filter[/FlateDecode]>>stream\r\n" + string(deflate([]byte("/Type /Page /Count 4 /Type/Page"), 9)) + "endstream endobj"))
	f.Add([]byte("<</Type /ObjStm /Filter /FlateDecode>>stream\n" + string(bomb(4)) + "\nendstream trailer<</Size 7>>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		enc := base64.StdEncoding.EncodeToString(b)
		got := pdfScanDoc(strings.NewReader(enc), pdfBufSize).pages()
		if got < 1 || got > maxPDFPages {
			t.Fatalf("%d pages", got)
		}
		if raw := referencePages(b); got < raw {
			t.Fatalf("%d pages, the scan without inflating finds %d", got, raw)
		}
		if small := pdfScanDoc(strings.NewReader(enc), 2*pdfLookahead).pages(); small != got {
			t.Fatalf("%d pages with a small buffer, %d with the default", small, got)
		}
	})
}

func documentBlock(data string) obj {
	return obj{"type": "document", "source": obj{"type": "base64", "media_type": "application/pdf", "data": data}}
}

func TestPDFDocumentsChargedPerPageInEveryShape(t *testing.T) {
	const pages = 5
	data := base64.StdEncoding.EncodeToString(buildPDF(pages, 40_000)) // ~270 KB of base64
	url := "data:application/pdf;base64," + data
	cases := map[string]struct {
		model string
		msg   obj
		docs  int
	}{
		"anthropic top level": {"claude-sonnet-4-6", obj{"role": "user", "content": []any{
			obj{"type": "text", "text": "summarise"}, documentBlock(data)}}, 1},
		"anthropic in tool_result": {"claude-sonnet-4-6", obj{"role": "user", "content": []any{
			obj{"type": "tool_result", "tool_use_id": "t", "content": []any{documentBlock(data), documentBlock(data)}}}}, 2},
		"gemini inline_data": {"gemini-2.5-pro", obj{"role": "user", "parts": []any{
			obj{"text": "summarise"}, obj{"inline_data": obj{"mime_type": "application/pdf", "data": data}}}}, 1},
		"gemini inlineData": {"gemini-2.5-pro", obj{"role": "user", "parts": []any{
			obj{"inlineData": obj{"mimeType": "application/pdf", "data": data}}}}, 1},
		"openai chat file": {"gpt-5", obj{"role": "user", "content": []any{
			obj{"type": "file", "file": obj{"filename": "a.pdf", "file_data": url}}}}, 1},
		"openai responses input_file": {"gpt-5", obj{"role": "user", "content": []any{
			obj{"type": "input_file", "filename": "a.pdf", "file_data": url}}}, 1},
	}
	for name, tc := range cases {
		a := Assess(Inputs{Model: tc.model, Messages: []json.RawMessage{raw(t, tc.msg)}})
		// Pages are charged at the wire's figure: 258 on Gemini, 3,000 on
		// Anthropic and OpenAI.
		perPage := defaultPageTokens
		if strings.HasPrefix(tc.model, "gemini") {
			perPage = 258
		}
		want := tc.docs * pages * perPage
		if a.Documents != tc.docs || a.Pages != tc.docs*pages || a.PageTokens != perPage {
			t.Errorf("%s: %d documents, %d pages at %d", name, a.Documents, a.Pages, a.PageTokens)
		}
		if a.Breakdown.History < want || a.Breakdown.History > want+200 {
			t.Errorf("%s: history %d, want about %d", name, a.Breakdown.History, want)
		}
	}
}

// A document whose source is text is charged on its text, as before.
func TestTextDocumentChargedOnItsText(t *testing.T) {
	m := raw(t, obj{"role": "user", "content": []any{obj{"type": "document", "source": obj{
		"type": "text", "media_type": "text/plain", "data": strings.Repeat("base64 is mentioned /Type /Page. ", 500)}}}})
	c := tokens.Safe{}
	got := estimateMessage(c, m, testCharges)
	if want := textCount(t, c, m); got.documents != 0 || got.pages != 0 || got.tokens != want {
		t.Fatalf("text document: %+v, want %d tokens", got, want)
	}
}

// Garbage in a PDF source is still a document: one page, no panic, and the
// payload is not charged by its length.
func TestGarbagePDFChargedOnePage(t *testing.T) {
	for _, data := range []string{"%%% not base64 %%%", strings.Repeat("!@#$", 10_000), strings.Repeat("QUJD", 10_000)} {
		m := raw(t, obj{"role": "user", "content": []any{documentBlock(data)}})
		got := estimateMessage(tokens.Safe{}, m, testCharges)
		if got.documents != 1 || got.pages != 1 || got.tokens > defaultPageTokens+100 {
			t.Errorf("garbage %.10q: %+v", data, got)
		}
	}
}

func TestPageChargeIsConfigurable(t *testing.T) {
	data := base64.StdEncoding.EncodeToString(buildPDF(2, 0))
	msgs := []json.RawMessage{raw(t, obj{"role": "user", "content": []any{documentBlock(data)}})}
	a := Assess(Inputs{Model: "claude-sonnet-4-6", Messages: msgs, PageTokens: 1500})
	if a.PageTokens != 1500 || a.Pages != 2 || a.Breakdown.History < 3000 || a.Breakdown.History > 3200 {
		t.Fatalf("page tokens %d pages %d history %d", a.PageTokens, a.Pages, a.Breakdown.History)
	}
	cat, err := LoadCatalog(strings.NewReader(`{"models":[{"name":"lean","match":["lean"],"wire":"anthropic","window":100000,"max_output":1000,"page_tokens":2000}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := Assess(Inputs{Model: "lean-1", Catalog: cat, Messages: msgs}); a.PageTokens != 2000 || a.Pages != 2 {
		t.Fatalf("catalog page_tokens not applied: %+v", a)
	}
	if _, err := LoadCatalog(strings.NewReader(`{"models":[{"name":"x","match":["x"],"wire":"anthropic","window":1,"page_tokens":-1}]}`)); err == nil {
		t.Fatal("negative page_tokens accepted")
	}
}

// A 20 MB base64 PDF takes the fast path: the counter sees kilobytes and
// the page count comes from the whole payload.
func TestTwentyMegabytePDF(t *testing.T) {
	const pages = 60
	pad := (15 << 20) / pages
	if testing.Short() {
		pad /= 10 // the same path at a tenth of the size
	}
	m := pdfMessage(base64.StdEncoding.EncodeToString(buildPDF(pages, pad)))
	if !testing.Short() && len(m) < 20<<20 {
		t.Fatalf("message is only %d bytes", len(m))
	}
	c := &countingCounter{Counter: tokens.Safe{}}
	got := estimateMessage(c, m, testCharges)
	if got.documents != 1 || got.pages != pages || got.tokens < pages*defaultPageTokens || got.tokens > pages*defaultPageTokens+200 {
		t.Errorf("%+v", got)
	}
	if n := c.bytes.Load(); n > 16<<10 {
		t.Errorf("counter saw %d bytes of a %d-byte message", n, len(m))
	}
}

func pdfMessage(data string) []byte {
	return []byte(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"` + data + `"}}]}]}`)
}

// The fast path agrees with the full estimate on a 2 MB PDF, also when the
// JSON escapes bytes of the payload past the kept prefix (the fast path
// then unquotes the literal to count pages).
func TestPDFFastPathAgreesWithFull(t *testing.T) {
	const pages = 9
	data := base64.StdEncoding.EncodeToString(buildPDF(pages, (3<<19)/pages))
	escaped := pdfMessage(data[:elidePrefix] + strings.ReplaceAll(data[elidePrefix:], "e", `\u0065`))
	if !bytes.Contains(escaped, []byte(`\u0065`)) {
		t.Fatal("test payload has nothing to escape")
	}
	for name, m := range map[string][]byte{"plain": pdfMessage(data), "escaped": escaped} {
		fast, full := estimateMessage(tokens.Safe{}, m, testCharges), estimateFull(tokens.Safe{}, m, testCharges)
		if fast != full || fast.pages != pages || fast.documents != 1 {
			t.Errorf("%s: fast %+v, full %+v", name, fast, full)
		}
	}
}

// A Session charges PDFs exactly as Assess does, also from its per-message
// cache after a message is appended.
func TestSessionChargesPDFsLikeAssess(t *testing.T) {
	data := base64.StdEncoding.EncodeToString(buildPDF(4, 2000))
	msgs := []json.RawMessage{
		raw(t, obj{"role": "user", "content": []any{documentBlock(data), obj{"type": "text", "text": "read this"}}}),
		raw(t, obj{"role": "assistant", "content": "done"}),
	}
	s := NewSession(&SessionOptions{Model: "claude-sonnet-4-6"})
	for range 2 {
		via, direct := s.Assess(msgs), Assess(s.Inputs(msgs))
		if !reflect.DeepEqual(via, direct) || via.Documents != 1 || via.Pages != 4 {
			t.Fatalf("session %+v\nassess %+v", via, direct)
		}
		msgs = append(msgs, raw(t, obj{"role": "user", "content": "and then?"}))
	}
}
