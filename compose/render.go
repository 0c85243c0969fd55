package compose

import (
	"strings"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/fence"
)

// Offer is one frame as a provider offered it: the unit every composition
// function takes. Provider is the host's local id for the serving provider,
// the first component of the frame's identity. A nil Frame is treated as a
// frame whose members are all empty.
type Offer struct {
	// Provider is the host's local id for the provider that served the
	// frame; it is rendered in the fence's provider attribute.
	Provider string `json:"provider"`
	// Frame is the offered frame, as the provider sent it; compose does
	// not modify it. nil counts as an empty frame.
	Frame *frame.Frame `json:"frame"`
}

var emptyFrame frame.Frame

// frameOf returns o.Frame, or an empty frame when it is nil.
func (o Offer) frame() *frame.Frame {
	if o.Frame == nil {
		return &emptyFrame
	}
	return o.Frame
}

// ID returns the offer's canonical identity (provider, frame id, digest).
func (o Offer) ID() frame.ID { return o.frame().Identity(o.Provider) }

// The fixed parts of a fence. The opening line is
//
//	<frame provider="P" id="I" kind="K" cite="C">
//
// followed by a newline, the neutralised content, a newline and </frame>
// with its own newline.
const (
	fenceOpenProvider = `<frame provider="`
	fenceOpenID       = `" id="`
	fenceOpenKind     = `" kind="`
	fenceOpenCite     = `" cite="`
	fenceOpenEnd      = "\">\n"
	fenceClose        = "\n</frame>\n"
	fenceChrome       = len(fenceOpenProvider) + len(fenceOpenID) + len(fenceOpenKind) +
		len(fenceOpenCite) + len(fenceOpenEnd) + len(fenceClose)
)

// RenderedLen is the exact length in bytes of the block the frame renders as
// for provider, computed without rendering it.
func RenderedLen(provider string, f *frame.Frame) int {
	if f == nil {
		f = &emptyFrame
	}
	attrs, content := renderedLens(provider, f)
	return attrs + content
}

// renderedLens returns the rendered length of the fence with its attributes,
// and that of the neutralised content.
func renderedLens(provider string, f *frame.Frame) (attrs, content int) {
	return fenceChrome + escapedAttrLen(provider) + escapedAttrLen(f.ID) +
		escapedAttrLen(string(f.Kind)) + escapedAttrLen(f.Cite()), neutralizedLen(inlineContent(f))
}

// RenderedCost is what composing the frame costs: the canonical budget tokens
// (ceil(bytes/4)) of the whole block it renders as, fence and attributes
// included. Title and citation label are provider bytes the host must
// render, so they are charged; score and token_cost are never rendered.
// It is computed from lengths alone, without rendering the block.
func RenderedCost(provider string, f *frame.Frame) int {
	return (RenderedLen(provider, f) + 3) / 4
}

// RenderFrame returns the fenced block of one frame:
//
//	<frame provider="P" id="I" kind="K" cite="C">\n CONTENT \n</frame>\n
//
// cite is the citation label, or the title when the label is blank. A
// reference frame (no inline content) renders with empty content. Attribute
// values are escaped and content is neutralised so that, whatever their
// bytes, the block has exactly one opening and one closing fence.
func RenderFrame(provider string, f *frame.Frame) string {
	if f == nil {
		f = &emptyFrame
	}
	// Sized from the unescaped lengths: one scan of the content, and the
	// builder grows in the rare case something is neutralised or escaped.
	cite := f.Cite()
	var b strings.Builder
	b.Grow(fenceChrome + len(provider) + len(f.ID) + len(f.Kind) + len(cite) + len(inlineContent(f)))
	writeFrame(&b, provider, f, cite, false, false)
	return b.String()
}

// Context is the determinism floor: it renders the set of offers in canonical
// FrameID order, each identity once, with score and token_cost never
// rendered. The same set yields the same bytes whatever the arrival order
// and whatever the scores. When two offers share an identity but differ in
// rendered members (a provider breaking its own identity rule), the one with
// the smaller rendered members is kept, so the choice still depends only on
// the set.
func Context(offers []Offer) string {
	ids := make([]frame.ID, len(offers))
	for i, o := range offers {
		ids[i] = o.ID()
	}
	order := canonicalOrder(offers, ids)
	// Of each run of one identity, keep the offer with the smallest
	// rendered members.
	kept := order[:0:0]
	for k := 0; k < len(order); {
		best, j := order[k], k+1
		for ; j < len(order) && ids[order[j]] == ids[best]; j++ {
			if compareRendered(offers[order[j]].frame(), offers[best].frame()) < 0 {
				best = order[j]
			}
		}
		kept = append(kept, best)
		k = j
	}
	// One pass over each content: the output is sized from the unescaped
	// lengths (exact unless something is neutralised or escaped, when the
	// builder grows), so no content is scanned twice.
	size := 0
	for _, i := range kept {
		f := offers[i].frame()
		size += fenceChrome + len(offers[i].Provider) + len(f.ID) + len(f.Kind) + len(f.Cite()) + len(inlineContent(f))
	}
	var b strings.Builder
	b.Grow(size)
	for _, i := range kept {
		f := offers[i].frame()
		writeFrame(&b, offers[i].Provider, f, f.Cite(), false, false)
	}
	return b.String()
}

// compareRendered orders two frames by the members that are rendered, so
// that a choice between same-identity frames never depends on score.
func compareRendered(a, b *frame.Frame) int {
	if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
		return c
	}
	if c := strings.Compare(a.Cite(), b.Cite()); c != 0 {
		return c
	}
	return strings.Compare(inlineContent(a), inlineContent(b))
}

// writeFrame writes the block of one frame to b,
// without an intermediate buffer when nothing needs escaping. cite is
// f.Cite(); clean says the content, plainAttrs that every attribute value,
// is known to be written verbatim.
func writeFrame(b *strings.Builder, provider string, f *frame.Frame, cite string, clean, plainAttrs bool) {
	if plainAttrs {
		b.WriteString(fenceOpenProvider)
		b.WriteString(provider)
		b.WriteString(fenceOpenID)
		b.WriteString(f.ID)
		b.WriteString(fenceOpenKind)
		b.WriteString(string(f.Kind))
		b.WriteString(fenceOpenCite)
		b.WriteString(cite)
	} else {
		b.WriteString(fenceOpenProvider)
		writeAttr(b, provider)
		b.WriteString(fenceOpenID)
		writeAttr(b, f.ID)
		b.WriteString(fenceOpenKind)
		writeAttr(b, string(f.Kind))
		b.WriteString(fenceOpenCite)
		writeAttr(b, cite)
	}
	b.WriteString(fenceOpenEnd)
	content := inlineContent(f)
	if clean {
		b.WriteString(content)
	} else {
		last := 0
		frameScanner.Scan(content, func(t fence.Token) {
			writeValid(b, content[last:t.End])
			b.WriteString(t.Breaker())
			last = t.End
		})
		writeValid(b, content[last:])
	}
	b.WriteString(fenceClose)
}

// writeValid writes s to b with each invalid byte as U+FFFD
// (fence.AppendValid says why). Not through an io.StringWriter: b would
// escape to the heap. The repaired copy is sized exactly: grown by
// doubling, it cost more than the repair.
func writeValid(b *strings.Builder, s string) {
	if utf8.ValidString(s) {
		b.WriteString(s)
		return
	}
	n := fence.ValidLen(s)
	b.Grow(n)
	b.Write(fence.AppendValid(make([]byte, 0, n), s))
}

// writeAttr writes an escaped attribute value to b.
func writeAttr(b *strings.Builder, v string) {
	if attrIsPlain(v) {
		b.WriteString(v)
		return
	}
	b.Write(appendAttr(nil, v))
}

// inlineContent is the content a frame renders: empty for a reference frame
// (which must be resolved before composition and carries no inline bytes),
// else its content.
func inlineContent(f *frame.Frame) string {
	if f.Representation == frame.RepresentationReference {
		return ""
	}
	return f.Content
}
