// Package serve is the provider side of the Context Graph Protocol: it
// answers a host's envelopes for any Server, over a transport.Connection
// (a provider's own stdin and stdout, or memory) or over HTTP, so that
// other CGP hosts can use a Go provider.
package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/wire"
)

// Server is what a Go value implements to be a CGP provider: served here,
// or in a host's own process (host.InProcess). Returning a *wire.Error from
// a method sends that error envelope, code included; any other error is
// sent as code "internal".
type Server interface {
	Handshake(ctx context.Context, hostVersion string) (*wire.HandshakeAck, error)
	Query(ctx context.Context, q *frame.Query) (*wire.Result, error)
	Verify(ctx context.Context, ids []frame.ID) ([]wire.Verdict, error)
}

// Stdio serves s over NDJSON on r and w (see Conn).
func Stdio(ctx context.Context, s Server, r io.Reader, w io.Writer) error {
	return Conn(ctx, s, transport.Stream(r, w, 0, nil))
}

// Conn serves s on c: it reads envelopes one at a time and writes the
// replies. It answers a malformed or over-long line with a bad_request
// error and carries on (R1), echoes each query's correlation id, ignores
// unknown notifications (an unknown request gets bad_request), and returns nil on shutdown or end of input.
// Queries are answered concurrently when the host correlates them.
func Conn(ctx context.Context, s Server, c transport.Connection) error {
	send := func(e wire.Envelope) error {
		line, err := wire.Marshal(e)
		if err != nil {
			return err
		}
		return c.Write(ctx, line)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := c.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if errors.As(err, new(*wire.TooLongError)) {
				if err := send(&wire.Error{Code: wire.CodeBadRequest, Message: err.Error()}); err != nil {
					return err
				}
				continue
			}
			return err
		}
		env, derr := wire.Unmarshal(line)
		if derr != nil {
			if err := send(&wire.Error{Code: wire.CodeBadRequest, Message: "malformed envelope: " + derr.Error()}); err != nil {
				return err
			}
			continue
		}
		switch e := env.(type) {
		case *wire.Shutdown:
			return nil
		case *wire.Query:
			if e.ID != "" {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = send(serveOne(ctx, s, e))
				}()
				continue
			}
			if err := send(serveOne(ctx, s, e)); err != nil {
				return err
			}
		default:
			if reply := serveOne(ctx, s, env); reply != nil {
				if err := send(reply); err != nil {
					return err
				}
			}
		}
	}
}

// serveOne answers one request envelope; nil means no reply (a notification).
func serveOne(ctx context.Context, s Server, env wire.Envelope) wire.Envelope {
	toErr := func(id string, err error) wire.Envelope {
		var we *wire.Error
		if errors.As(err, &we) {
			c := *we
			c.ID = id
			return &c
		}
		return &wire.Error{ID: id, Code: wire.CodeInternal, Message: err.Error()}
	}
	switch e := env.(type) {
	case *wire.Handshake:
		ack, err := s.Handshake(ctx, e.ProtocolVersion)
		if err != nil {
			return toErr("", err)
		}
		return ack
	case *wire.Query:
		if e.Query.MaxTokens == 0 || e.Query.MaxFrames == 0 {
			return &wire.Error{ID: e.ID, Code: wire.CodeBadRequest, Message: "query.max_tokens and query.max_frames must be positive"}
		}
		res, err := s.Query(ctx, &e.Query)
		if err != nil {
			return toErr(e.ID, err)
		}
		if res.Frames == nil {
			res.Frames = []frame.Frame{}
		}
		return &wire.Frames{ID: e.ID, Result: *res}
	case *wire.Verify:
		vs, err := s.Verify(ctx, e.Request.Frames)
		if err != nil {
			return toErr("", err)
		}
		if vs == nil {
			vs = []wire.Verdict{}
		}
		return &wire.Verified{Response: wire.VerifyResponse{Verdicts: vs}}
	case *wire.Unknown:
		// An unknown request (it carries an id) is answered, so that its
		// sender does not wait out a timeout; an unknown notification is
		// ignored (docs/protocol.md §1.2).
		if id, ok := requestID(e.Raw); ok {
			return &wire.Error{ID: id, Code: wire.CodeBadRequest, Message: "unknown envelope type " + strconv.Quote(e.Tag)}
		}
		return nil
	default:
		return &wire.Error{Code: wire.CodeBadRequest, Message: "unexpected envelope " + strconv.Quote(env.Type())}
	}
}

// requestID returns the id member of an envelope's JSON, when it has a
// non-empty string one.
func requestID(raw []byte) (string, bool) {
	var m struct {
		ID *string `json:"id"`
	}
	if json.Unmarshal(raw, &m) != nil || m.ID == nil || *m.ID == "" {
		return "", false
	}
	return *m.ID, true
}

// HTTP serves s over HTTP: one envelope per POST body, one envelope per
// response body (application/json). A shutdown is answered 204; a malformed
// body 400 with a bad_request error envelope.
func HTTP(s Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST one CGP envelope", http.StatusMethodNotAllowed)
			return
		}
		reply := func(status int, e wire.Envelope) {
			w.Header().Set("Content-Type", wire.ContentType)
			w.WriteHeader(status)
			_ = wire.WriteBody(w, e)
		}
		env, err := wire.ReadBody(r.Body, 0)
		if err != nil {
			msg := "malformed envelope: " + err.Error()
			if !errors.As(err, new(*wire.DecodeError)) || errors.As(err, new(*wire.TooLongError)) {
				msg = "unreadable or over-long body"
			}
			reply(http.StatusBadRequest, &wire.Error{Code: wire.CodeBadRequest, Message: msg})
			return
		}
		if _, ok := env.(*wire.Shutdown); ok {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		out := serveOne(r.Context(), s, env)
		if out == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		status := http.StatusOK
		if e, ok := out.(*wire.Error); ok {
			status = http.StatusInternalServerError
			switch e.Code.Effective() {
			case wire.CodeBadRequest, wire.CodeUnsupportedKind, wire.CodeUnsupportedRepresentation, wire.CodeIncompatibleVersion, wire.CodeBudgetUnsatisfiable:
				status = http.StatusBadRequest
			case wire.CodeUnavailable, wire.CodeShuttingDown:
				status = http.StatusServiceUnavailable
			}
		}
		reply(status, out)
	})
}
