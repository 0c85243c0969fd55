package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/host/transport"
)

// ServeStdio serves s to one MCP client over the stdio transport, one
// JSON-RPC message a line read from in and written to out, until the
// client closes in (nil) or ctx is done (ctx's error). A line over 16 MiB,
// or one that is not a JSON-RPC message, ends the session with an error,
// as the SDK's own stdio transport does.
//
// The session behaves as one over the SDK's mcp.IOTransport; what differs
// is the cost of ctxkit's tool results, which are already JSON: they are
// written as they are, where the SDK's transport would scan and compact
// them twice more (see BENCHMARKS.md, issue 17).
func ServeStdio(ctx context.Context, s *mcp.Server, in io.Reader, out io.Writer) error {
	return serveStdio(ctx, s, in, out, 0)
}

// serveStdio is ServeStdio with a line limit (0: the protocol's default).
func serveStdio(ctx context.Context, s *mcp.Server, in io.Reader, out io.Writer, maxLine int) error {
	c := newStdioConn(in, out, maxLine)
	defer c.workers.stop()
	return s.Run(context.WithValue(ctx, sessionKey{}, c), stdioTransport{c})
}

// sessionKey is the context key under which ServeStdio's session offers
// the tool middleware its connection: its workers and its heldResults.
type sessionKey struct{}

// stdioTransport hands the SDK its one connection.
type stdioTransport struct{ c *stdioConn }

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// batchVersion is the first protocol version without JSON-RPC batches.
const batchVersion = "2025-06-18"

// stdioConn is an mcp.Connection over the line connection of
// host/transport, the bounded line reader every ctxkit stream goes
// through. Lines are read on a goroutine of their own so that Close ends
// a Read waiting on a stdin that cannot be interrupted (the goroutine then
// waits for the next line or EOF, as the SDK's does).
type stdioConn struct {
	conn   transport.Connection
	lines  chan lineOrErr
	closed chan struct{}
	once   sync.Once

	// queue holds the rest of the last batch read (Reads are sequential).
	queue []jsonrpc.Message

	mu sync.Mutex
	// version is the protocol version the initialize answer negotiated;
	// initIDs are the initialize calls not answered yet.
	version string
	initIDs map[jsonrpc.ID]bool
	// batches maps each call of an unanswered batch to its batch.
	batches map[jsonrpc.ID]*batch

	// held and workers are the session's, for the tool middleware (see
	// sessionKey).
	held    heldResults
	workers *workers
}

type lineOrErr struct {
	line []byte
	err  error
}

func newStdioConn(in io.Reader, out io.Writer, maxLine int) *stdioConn {
	c := &stdioConn{
		conn:    transport.Stream(in, out, maxLine, nil),
		lines:   make(chan lineOrErr),
		closed:  make(chan struct{}),
		workers: newWorkers(),
	}
	go c.readLines()
	return c
}

func (c *stdioConn) readLines() {
	for {
		line, err := c.conn.Read()
		select {
		case c.lines <- lineOrErr{line, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// SessionID is empty: a stdio session has no id.
func (c *stdioConn) SessionID() string { return "" }

// Close ends the connection; a waiting Read returns io.EOF.
func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.conn.Close()
}

// Read returns the next message: the next of the last batch, or the
// message (or batch) on the next line.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	var line []byte
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case l := <-c.lines:
		if l.err != nil {
			return nil, l.err
		}
		line = l.line
	}
	msgs, err := c.decodeLine(line)
	if err != nil {
		return nil, err
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// decodeLine decodes one line: a message, or a batch of them where the
// negotiated protocol still has batches.
func (c *stdioConn) decodeLine(line []byte) ([]jsonrpc.Message, error) {
	line = bytes.TrimLeft(line, " \t\r")
	// The SDK's decoder reads the first value of its input and ignores the
	// rest; a line holding more than one value is refused, as the SDK's
	// stdio transport refuses trailing data.
	if !json.Valid(line) {
		return nil, errors.New("mcpserver: a stdio line is not one JSON value")
	}
	if line[0] != '[' {
		msg, err := decodeMessage(line)
		if err != nil {
			return nil, err
		}
		c.noteInitialize(msg)
		return []jsonrpc.Message{msg}, nil
	}
	c.mu.Lock()
	version := c.version
	c.mu.Unlock()
	if version >= batchVersion {
		return nil, fmt.Errorf("JSON-RPC batching is not supported in %s and later (request version: %s)", batchVersion, version)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		msg, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		c.noteInitialize(msg)
		msgs = append(msgs, msg)
	}
	return msgs, c.addBatch(msgs)
}

// decodeMessage is jsonrpc.DecodeMessage, cheaper for a plain request
// (see decodeRequest).
func decodeMessage(b []byte) (jsonrpc.Message, error) {
	if req, ok := decodeRequest(b); ok {
		return req, nil
	}
	return jsonrpc.DecodeMessage(b)
}

// noteInitialize remembers an initialize call, whose answer names the
// protocol version (the SDK tells its own transports; this one learns it
// from the answer).
func (c *stdioConn) noteInitialize(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "initialize" {
		c.mu.Lock()
		if c.initIDs == nil {
			c.initIDs = map[jsonrpc.ID]bool{}
		}
		c.initIDs[req.ID] = true
		c.mu.Unlock()
	}
}

// noteVersion reads the protocol version from the answer to an
// initialize call.
func (c *stdioConn) noteVersion(resp *jsonrpc.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initIDs[resp.ID] {
		return
	}
	delete(c.initIDs, resp.ID)
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if resp.Error == nil && json.Unmarshal(resp.Result, &init) == nil {
		c.version = init.ProtocolVersion
	}
}

// batch is an incoming batch whose calls are not all answered yet: the
// answers go out together, in the order of the calls (JSON-RPC 2.0, 6).
type batch struct {
	index   map[jsonrpc.ID]int
	answers []*jsonrpc.Response
	left    int
}

// addBatch records the calls of a batch.
func (c *stdioConn) addBatch(msgs []jsonrpc.Message) error {
	b := &batch{index: map[jsonrpc.ID]int{}}
	for _, msg := range msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := b.index[req.ID]; dup {
				return fmt.Errorf("duplicate message ID %v in a batch", req.ID.Raw())
			}
			b.index[req.ID] = len(b.answers)
			b.answers = append(b.answers, nil)
		}
	}
	if len(b.answers) == 0 {
		return nil
	}
	b.left = len(b.answers)
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range b.index {
		if _, seen := c.batches[id]; seen {
			return fmt.Errorf("invalid request: batch contains previously seen request %v", id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*batch{}
	}
	for id := range b.index {
		c.batches[id] = b
	}
	return nil
}

// answerInBatch records resp when it answers a call of a batch. It
// reports whether it did, and returns the batch's answers once resp was
// the last one.
func (c *stdioConn) answerInBatch(resp *jsonrpc.Response) ([]*jsonrpc.Response, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	delete(c.batches, resp.ID)
	b.answers[b.index[resp.ID]] = resp
	if b.left--; b.left > 0 {
		return nil, true
	}
	return b.answers, true
}

// Write sends one message on its line; an answer to a call of a batch
// waits for the rest of the batch and goes out with it.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	line, err := c.encodeLine(msg)
	if err != nil || line == nil {
		return err
	}
	return c.conn.Write(ctx, line)
}

// encodeLine returns msg's line, or nil for an answer that waits for the
// rest of its batch.
func (c *stdioConn) encodeLine(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.encode(msg)
	}
	c.noteVersion(resp)
	answers, inBatch := c.answerInBatch(resp)
	switch {
	case !inBatch:
		return c.encode(msg)
	case answers == nil:
		return nil, nil
	}
	return c.encodeBatch(answers)
}

func (c *stdioConn) encodeBatch(answers []*jsonrpc.Response) ([]byte, error) {
	line := []byte{'['}
	for i, a := range answers {
		b, err := c.encode(a)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			line = append(line, ',')
		}
		line = append(line, b...)
	}
	return append(line, ']'), nil
}

// encode writes msg as the SDK's jsonrpc.EncodeMessage does. A successful
// answer is written around its result, which the SDK has already encoded
// and compacted (or which is held, see heldResults), without another pass.
func (c *stdioConn) encode(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || !resp.ID.IsValid() {
		return jsonrpc.EncodeMessage(msg)
	}
	result, err := c.held.take(resp.Result)
	if err != nil {
		return nil, err
	}
	var id []byte
	switch v := resp.ID.Raw().(type) {
	case int64:
		id = strconv.AppendInt(nil, v, 10)
	case string:
		id = jsonString(v)
	default:
		return jsonrpc.EncodeMessage(msg)
	}
	line := make([]byte, 0, len(result)+len(id)+40)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, id...)
	line = append(line, `,"result":`...)
	line = append(line, result...)
	return append(line, '}'), nil
}

// heldResults keeps the encoded results of one stdio session's tool calls
// (or of one HTTP request's) until they are written: MarshalJSON hands the
// SDK a small token instead, so the SDK's JSON-RPC layer copies and
// compacts a few bytes rather than the whole result, and the writer puts
// the result where the token stands.
type heldResults struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64][]byte
	// prefix opens every token; empty means heldPrefix. Over HTTP it
	// carries a random nonce, since the writer looks for tokens inside
	// the SDK's framing rather than taking a whole result.
	prefix []byte
}

const heldPrefix = `{"ctxkit.held":`

func (h *heldResults) tokenPrefix() []byte {
	if h.prefix != nil {
		return h.prefix
	}
	return []byte(heldPrefix)
}

// hold keeps b and returns the token that stands for it.
func (h *heldResults) hold(b []byte) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[uint64][]byte{}
	}
	h.next++
	h.m[h.next] = b
	return append(strconv.AppendUint(bytes.Clone(h.tokenPrefix()), h.next, 10), '}')
}

// take returns the bytes result's token stands for, removing them, or
// result itself when it is no token.
func (h *heldResults) take(result []byte) ([]byte, error) {
	digits, ok := bytes.CutPrefix(result, h.tokenPrefix())
	if !ok {
		return result, nil
	}
	digits, ok = bytes.CutSuffix(digits, []byte("}"))
	if !ok {
		return result, nil
	}
	n, err := strconv.ParseUint(string(digits), 10, 64)
	if err != nil {
		return result, nil
	}
	b, ok := h.remove(n)
	if !ok {
		return nil, fmt.Errorf("mcpserver: held result %d is missing", n)
	}
	return b, nil
}

// remove returns the bytes held under n, and forgets them.
func (h *heldResults) remove(n uint64) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.m[n]
	delete(h.m, n)
	return b, ok
}
