package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldHeader is the request header under which HTTPHandler names, for
// the tool middleware, the heldResults of the POST a call came in on. A
// client's own value is dropped before the SDK sees the request.
const heldHeader = "Ctxkit-Held-Results"

// heldKey is the context key under which a call finds the heldResults
// its answer is to be held in until the HTTP writer puts it in place.
type heldKey struct{}

// heldRequests hands each POST of one HTTPHandler its own heldResults, so
// that a large tool answer is not copied four times by the SDK's
// JSON-RPC and event-stream layers while a client reads it (a 4 MiB call
// held some 20-60 MB that way; see BENCHMARKS.md, issue 21, session 11).
type heldRequests struct {
	prefix []byte // opens every token: the stdio prefix and a random nonce

	mu   sync.Mutex
	next uint64
	m    map[string]*heldResults
}

func newHeldRequests() *heldRequests {
	return &heldRequests{
		prefix: []byte(`{"ctxkit.held.` + rand.Text() + `":`),
		m:      map[string]*heldResults{},
	}
}

// open registers a heldResults for one request and returns its key; close
// drops it and whatever its calls left unwritten.
func (hr *heldRequests) open() (key string, held *heldResults, close func()) {
	held = &heldResults{prefix: hr.prefix}
	hr.mu.Lock()
	hr.next++
	key = strconv.FormatUint(hr.next, 10)
	hr.m[key] = held
	hr.mu.Unlock()
	return key, held, func() {
		hr.mu.Lock()
		delete(hr.m, key)
		hr.mu.Unlock()
	}
}

func (hr *heldRequests) lookup(key string) *heldResults {
	if key == "" {
		return nil
	}
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return hr.m[key]
}

// middleware puts the heldResults of the POST a tool call came in on into
// the call's context, where encodedCalls finds it. It must wrap
// encodedCalls (the SDK runs later-added middleware first).
func (hr *heldRequests) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if extra := req.GetExtra(); extra != nil && extra.Header != nil {
				if held := hr.lookup(extra.Header.Get(heldHeader)); held != nil {
					ctx = context.WithValue(ctx, heldKey{}, held)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// splice writes p through write with every token of held replaced by the
// bytes it stands for. Anything that only looks like a token (no number,
// or nothing held under it) is written as it is.
func (h *heldResults) splice(p []byte, write func([]byte) error) error {
	prefix := h.tokenPrefix()
	for {
		i := bytes.Index(p, prefix)
		if i < 0 {
			return write(p)
		}
		rest := p[i+len(prefix):]
		end := bytes.IndexByte(rest, '}')
		var result []byte
		found := false
		if end > 0 {
			if n, err := strconv.ParseUint(string(rest[:end]), 10, 64); err == nil {
				result, found = h.remove(n)
			}
		}
		if !found {
			// Not one of ours: write through the prefix and go on.
			if err := write(p[:i+len(prefix)]); err != nil {
				return err
			}
			p = rest
			continue
		}
		if err := write(p[:i]); err != nil {
			return err
		}
		if err := write(result); err != nil {
			return err
		}
		p = rest[end+1:]
	}
}
