package mcpbridge_test

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/mcpbridge"
)

// FuzzParseTarget: any spec is accepted or refused without a panic; an
// accepted one spells itself back and parses to the same target; plain
// http:// is only ever accepted to a loopback host, and a non-loopback
// URL is always remote.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"mcp:stdio:npx -y server", "mcp:https://h.example/mcp", "mcp:http://127.0.0.1:7/mcp",
		"mcp:http://evil.example/mcp", "mcp:http://[::1]/x", "mcp:http://localhost.evil/", "mcp:", "mcp:stdio:  ", "stdio:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		tg, err := mcpbridge.ParseTarget(spec)
		if err != nil {
			return
		}
		again, err := mcpbridge.ParseTarget(tg.String())
		if err != nil || again.String() != tg.String() {
			t.Fatalf("%q parsed to %q, which parses to %q (%v)", spec, tg, again, err)
		}
		if len(tg.Command) > 0 {
			return
		}
		u, err := url.Parse(tg.URL)
		if err != nil {
			t.Fatalf("accepted unparsable URL %q", tg.URL)
		}
		h := u.Hostname()
		ip := net.ParseIP(h)
		loop := strings.EqualFold(h, "localhost") || (ip != nil && ip.IsLoopback())
		if u.Scheme == "http" && !loop {
			t.Fatalf("accepted plain http to %q", u.Hostname())
		}
		if !loop && !tg.Remote() {
			t.Fatalf("%q to %q is not remote", spec, u.Hostname())
		}
	})
}
