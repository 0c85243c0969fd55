package mcpserver

import (
	"net/http"
	"net/url"
	"time"

	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where HTTPHandler serves MCP Streamable HTTP.
const Path = "/mcp"

// HTTPHandler serves s over MCP Streamable HTTP at Path. Requests whose
// Host header is not a loopback name while they arrive on a loopback
// address are refused by the SDK (403); requests carrying an Origin that
// is not a loopback origin are refused here (403), so that a web page the
// user visits cannot drive the server (DNS rebinding, cross-site POSTs).
// Any other path is 404. A session idle for 30 minutes is closed.
func HTTPHandler(s *mcp.Server) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != Path {
			http.Error(w, "not found: MCP is served at "+Path, http.StatusNotFound)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			http.Error(w, "forbidden: origin "+o+" is not a loopback origin", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackOrigin reports whether origin is http(s)://localhost,
// 127.0.0.1 or [::1], any port.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return transport.IsLoopback(u.Hostname())
}
