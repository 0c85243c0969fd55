package mcpbridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/wire"
)

// Provenance types of bridged frames.
const (
	ProvenanceResource = "mcp-resource" // a chunk of a resource; URI is the resource's
	ProvenanceTool     = "mcp-tool"     // a chunk of a tool's text result; Method is the tool
)

// Report lists what the last query left out, each with its reason.
type Report struct {
	// Listed is the number of resources listed.
	Listed int `json:"listed"`
	// Read is the number of resources read and ranked.
	Read int `json:"read"`
	// Bytes is the number of bytes read and ranked.
	Bytes int64 `json:"bytes"`
	// Left are the resources not ranked, in listing order.
	Left []LeftOut `json:"left_out,omitempty"`
}

// LeftOut is one resource the bridge did not rank, and why.
type LeftOut struct {
	// URI is the resource's URI ("" for the unlisted rest of a listing cut
	// short by MaxResources).
	URI string `json:"uri"`
	// Reason says why: "binary", "too_large", "byte_cap", "read_cap",
	// "list_cap", "read_failed" or "empty".
	Reason string `json:"reason"`
	// Detail adds the figures or the server's error.
	Detail string `json:"detail,omitempty"`
}

// Report returns what the last query listed, read and left out.
func (p *Provider) Report() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.report
	r.Left = append([]LeftOut(nil), r.Left...)
	for i := range r.Left {
		// The URIs and details are the server's words, and a server may
		// echo the credential into them.
		r.Left[i].URI = p.opts.Credential.Redact(r.Left[i].URI)
		r.Left[i].Detail = p.opts.Credential.Redact(r.Left[i].Detail)
	}
	return r
}

// source is one ranked document: a resource's text or a tool result.
type source struct {
	res  *mcp.Resource // nil for a tool result
	tool string
}

// Query lists and reads the MCP server's resources (and calls Tool), ranks
// their chunks for the goal and returns the best ones that fit max_tokens
// and max_frames.
func (p *Provider) Query(ctx context.Context, q *frame.Query) (*wire.Result, error) {
	if strings.TrimSpace(q.Goal) == "" {
		return nil, &wire.Error{Code: wire.CodeBadRequest, Message: "query.goal is blank"}
	}
	wantDoc, wantSnippet := q.WantsKind(frame.KindDoc), q.WantsKind(frame.KindSnippet)
	res := &wire.Result{Frames: []frame.Frame{}}
	if (!wantDoc && !wantSnippet) || q.MaxFrames == 0 || q.MaxTokens == 0 {
		return res, nil
	}
	s, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	docs, srcs, rep, err := p.gather(ctx, s, q.Goal)
	if err != nil {
		p.drop(s)
		return nil, err
	}
	hits, err := rank(ctx, q.Goal+" "+q.QueryText, docs)
	if err != nil {
		return nil, err
	}
	by := serverName(s, p.target)
	var used uint64
	dropped := uint32(0)
	for _, h := range hits {
		if (h.kind == frame.KindDoc && !wantDoc) || (h.kind != frame.KindDoc && !wantSnippet) {
			continue
		}
		f := p.makeFrame(srcs[h.doc], h, by)
		if len(res.Frames) >= int(q.MaxFrames) || used+uint64(f.TokenCost) > uint64(q.MaxTokens) {
			dropped++
			continue
		}
		used += uint64(f.TokenCost)
		res.Frames = append(res.Frames, f)
	}
	if dropped > 0 || len(rep.Left) > 0 {
		n := dropped + uint32(len(rep.Left))
		res.Truncated, res.DroppedEstimate = true, &n
	}
	p.mu.Lock()
	p.report = rep
	p.mu.Unlock()
	return res, nil
}

// gather lists and reads the resources and calls the tool, within the
// bounds, recording what it leaves out.
func (p *Provider) gather(ctx context.Context, s *mcp.ClientSession, goal string) ([]document, []source, Report, error) {
	var rep Report
	var docs []document
	var srcs []source
	if init := s.InitializeResult(); !p.opts.NoResources && init != nil && init.Capabilities != nil && init.Capabilities.Resources != nil {
		list, err := p.list(ctx, s, &rep)
		if err != nil {
			return nil, nil, rep, err
		}
		for _, r := range list {
			text, ok, err := p.read(ctx, s, r, &rep)
			if err != nil {
				return nil, nil, rep, err
			}
			if ok {
				docs = append(docs, document{name: r.URI, content: text})
				srcs = append(srcs, source{res: r})
			}
		}
	}
	if p.opts.Tool != "" {
		texts, err := p.callTool(ctx, s, goal)
		if err != nil {
			return nil, nil, rep, err
		}
		for _, t := range texts {
			docs = append(docs, document{name: p.opts.Tool + ".txt", content: []byte(t)})
			srcs = append(srcs, source{tool: p.opts.Tool})
		}
	}
	return docs, srcs, rep, nil
}

// list returns every page of resources/list up to MaxResources.
func (p *Provider) list(ctx context.Context, s *mcp.ClientSession, rep *Report) ([]*mcp.Resource, error) {
	var out []*mcp.Resource
	params := &mcp.ListResourcesParams{}
	for pages := 0; ; pages++ {
		r, err := s.ListResources(ctx, params)
		if err != nil {
			return nil, p.serverErr(ctx, "resources/list", err)
		}
		for _, res := range r.Resources {
			if res == nil || res.URI == "" {
				continue
			}
			if len(out) == p.opts.MaxResources {
				rep.Left = append(rep.Left, LeftOut{Reason: "list_cap", Detail: fmt.Sprintf("listing stopped at %d resources", p.opts.MaxResources)})
				rep.Listed = len(out)
				return out, nil
			}
			out = append(out, res)
		}
		if r.NextCursor == "" || r.NextCursor == params.Cursor || pages > p.opts.MaxResources {
			break
		}
		params = &mcp.ListResourcesParams{Cursor: r.NextCursor}
	}
	rep.Listed = len(out)
	return out, nil
}

// read returns a resource's text, or false with the reason recorded.
func (p *Provider) read(ctx context.Context, s *mcp.ClientSession, r *mcp.Resource, rep *Report) ([]byte, bool, error) {
	left := func(reason, detail string) ([]byte, bool, error) {
		rep.Left = append(rep.Left, LeftOut{URI: r.URI, Reason: reason, Detail: detail})
		return nil, false, nil
	}
	switch {
	case rep.Read >= p.opts.MaxReads:
		return left("read_cap", fmt.Sprintf("%d resources already read", p.opts.MaxReads))
	case r.Size > p.opts.MaxResourceBytes:
		return left("too_large", fmt.Sprintf("declared size %d > %d bytes", r.Size, p.opts.MaxResourceBytes))
	case r.Size > 0 && rep.Bytes+r.Size > p.opts.MaxBytes:
		return left("byte_cap", fmt.Sprintf("%d bytes already read of %d", rep.Bytes, p.opts.MaxBytes))
	case rep.Bytes >= p.opts.MaxBytes:
		return left("byte_cap", fmt.Sprintf("%d bytes already read of %d", rep.Bytes, p.opts.MaxBytes))
	case r.MIMEType != "" && !textual(r.MIMEType):
		return left("binary", "mime type "+r.MIMEType)
	}
	rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) {
			return nil, false, p.serverErr(ctx, "resources/read "+r.URI, err)
		}
		return left("read_failed", err.Error())
	}
	var text []byte
	for _, c := range rr.Contents {
		if c == nil || (c.URI != "" && c.URI != r.URI) {
			continue
		}
		if c.Blob != nil || (c.MIMEType != "" && !textual(c.MIMEType)) {
			return left("binary", "blob contents")
		}
		text = append(text, c.Text...)
	}
	switch n := int64(len(text)); {
	case n == 0:
		return left("empty", "no text contents")
	case n > p.opts.MaxResourceBytes:
		return left("too_large", fmt.Sprintf("%d bytes > %d", n, p.opts.MaxResourceBytes))
	case rep.Bytes+n > p.opts.MaxBytes:
		return left("byte_cap", fmt.Sprintf("%d bytes would pass the cap of %d", rep.Bytes+n, p.opts.MaxBytes))
	case !utf8.Valid(text):
		return left("binary", "text is not UTF-8")
	}
	rep.Read++
	rep.Bytes += int64(len(text))
	return text, true, nil
}

// textual reports whether a MIME type is text a prompt can quote.
func textual(mt string) bool {
	mt = strings.ToLower(strings.TrimSpace(strings.SplitN(mt, ";", 2)[0]))
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml", "application/toml",
		"application/javascript", "application/x-sh", "application/sql", "application/markdown":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// callTool calls the configured tool with the goal and returns its text
// results, at most MaxBytes of them.
func (p *Provider) callTool(ctx context.Context, s *mcp.ClientSession, goal string) ([]string, error) {
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: p.opts.Tool, Arguments: map[string]any{p.opts.ToolArgument: goal}})
	if err != nil {
		return nil, p.serverErr(ctx, "tools/call "+p.opts.Tool, err)
	}
	var out []string
	var n int64
	for _, c := range r.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t.Text == "" {
			continue
		}
		if n += int64(len(t.Text)); n > p.opts.MaxBytes {
			break
		}
		out = append(out, t.Text)
	}
	if r.IsError {
		// The tool's words, quoted and cut short: an error line is no place
		// for megabytes, nor for the server's line breaks and escapes.
		// The credential goes before the cut, which could leave half of it.
		text := p.opts.Credential.Redact(strings.Join(out, " "))
		if len(text) > maxErrorText {
			text = strings.ToValidUTF8(text[:maxErrorText], "") + "…"
		}
		return nil, fmt.Errorf("%w: tools/call %s: the tool answered an error: %s", errServer, p.opts.Tool, safetext.Quote(text))
	}
	return out, nil
}

// maxErrorText bounds the tool's own text quoted in an error.
const maxErrorText = 1 << 10

// serverErr types a failed MCP request: the context's error when the leg
// ran out of time, errServer otherwise.
func (p *Provider) serverErr(ctx context.Context, op string, err error) error {
	if ce := ctx.Err(); ce != nil {
		return fmt.Errorf("mcpbridge: %s %s: %w", p.target, op, ce)
	}
	return fmt.Errorf("%w %s: %s: %w%s", errServer, p.target, op, p.tooLarge(err), p.stderrNote())
}

// makeFrame turns a ranked chunk into a frame.
func (p *Provider) makeFrame(src source, h chunkHit, by string) frame.Frame {
	sum := sha256.Sum256([]byte(h.text))
	d := "sha256:" + hex.EncodeToString(sum[:])
	rng := "L" + strconv.Itoa(h.start) + "-" + strconv.Itoa(h.end)
	f := frame.Frame{
		Kind:          h.kind,
		Content:       h.text,
		ContentDigest: d,
		Score:         h.score,
		TokenCost:     uint32(frame.BudgetTokens([]byte(h.text))),
	}
	if src.res == nil {
		f.ID = "tool:" + src.tool + "#" + d[7:23]
		f.Title = by + " tool " + src.tool
		f.CitationLabel = by + "/" + src.tool
		f.Provenance = []frame.Provenance{{Type: ProvenanceTool, Digest: d, Method: src.tool, By: by}}
		return f
	}
	r := src.res
	name := r.Title
	if name == "" {
		name = r.Name
	}
	if name == "" {
		name = r.URI
	}
	f.ID = r.URI + "#" + rng
	f.URI = r.URI
	f.Title = name
	if h.heading != "" {
		f.Title += " — " + h.heading
	}
	f.CitationLabel = name + ":" + strconv.Itoa(h.start) + "-" + strconv.Itoa(h.end)
	f.Provenance = []frame.Provenance{{Type: ProvenanceResource, URI: r.URI, Range: rng, Digest: d, By: by}}
	if r.Annotations != nil && r.Annotations.LastModified != "" {
		if t, err := time.Parse(time.RFC3339Nano, r.Annotations.LastModified); err == nil {
			f.ValidFrom = t.UTC().Format("2006-01-02T15:04:05Z")
		}
	}
	return f
}
