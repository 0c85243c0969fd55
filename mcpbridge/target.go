package mcpbridge

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/ctxkit/ctxkit/host/transport"
)

// Target says how to reach an MCP server: a command to run (stdio) or a
// Streamable HTTP endpoint.
type Target struct {
	// Command is the program and its arguments, for stdio.
	Command []string
	// URL is the Streamable HTTP endpoint: https://, or http:// to a
	// loopback host only.
	URL string
}

// Prefix marks a provider spec as an MCP server: "mcp:stdio:CMD [ARGS...]"
// or "mcp:https://HOST/PATH".
const Prefix = "mcp:"

// ErrBadTarget is the error every malformed spec or target matches.
var ErrBadTarget = errors.New("mcpbridge: bad target")

// ParseTarget parses the part of a provider spec after "ID=":
// "mcp:stdio:CMD [ARGS...]" (the command split on spaces) or
// "mcp:https://HOST/PATH" ("mcp:http://" only to a loopback host).
func ParseTarget(spec string) (Target, error) {
	rest, ok := strings.CutPrefix(spec, Prefix)
	if !ok {
		return Target{}, fmt.Errorf("%w: %q does not start with %q", ErrBadTarget, spec, Prefix)
	}
	if cmd, ok := strings.CutPrefix(rest, "stdio:"); ok {
		argv := strings.Fields(cmd)
		if len(argv) == 0 {
			return Target{}, fmt.Errorf("%w: %q names no command", ErrBadTarget, spec)
		}
		return Target{Command: argv}, nil
	}
	t := Target{URL: rest}
	if err := t.check(); err != nil {
		return Target{}, err
	}
	return t, nil
}

// check refuses a target that is neither a command nor an acceptable URL.
func (t Target) check() error {
	if len(t.Command) > 0 {
		return nil
	}
	u, err := url.Parse(t.URL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%w: %q is neither stdio:CMD nor an http(s) URL", ErrBadTarget, t.URL)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if transport.IsLoopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%w: %s: plain http:// only to a loopback host; use https://", ErrBadTarget, t.URL)
	}
	return fmt.Errorf("%w: %s: scheme %q is not stdio:, https:// or http:// to loopback", ErrBadTarget, t.URL, u.Scheme)
}

// endpoint names the server for consent as ctxkit names any provider: the
// URL as it re-encodes after parsing, or the command's words joined by
// single spaces; a grant bound to another endpoint does not cover it.
func (t Target) endpoint() string {
	if len(t.Command) > 0 {
		return strings.Join(t.Command, " ")
	}
	if u, err := url.Parse(t.URL); err == nil {
		return u.String()
	}
	return t.URL
}

// remote reports whether the target sends data off the machine: an HTTP
// endpoint on a host that is not loopback.
func (t Target) remote() bool {
	if len(t.Command) > 0 {
		return false
	}
	u, err := url.Parse(t.URL)
	return err != nil || !transport.IsLoopback(u.Hostname())
}

// String names the target as a spec would.
func (t Target) String() string {
	if len(t.Command) > 0 {
		return Prefix + "stdio:" + strings.Join(t.Command, " ")
	}
	return Prefix + t.URL
}
