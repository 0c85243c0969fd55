package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// ServeStdio serves s over NDJSON: it reads envelopes from r, one per line,
// and writes replies to w. It answers a malformed or over-long line with a
// bad_request error and carries on (R1), echoes each query's correlation id,
// ignores unknown notifications, and returns nil on shutdown or EOF.
// Queries are answered concurrently when the host correlates them.
func ServeStdio(ctx context.Context, s Server, r io.Reader, w io.Writer) error {
	var wmu sync.Mutex
	send := func(e wire.Envelope) error {
		line, err := encodeEnvelope(e)
		if err != nil {
			return err
		}
		wmu.Lock()
		defer wmu.Unlock()
		_, err = w.Write(append(line, '\n'))
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, DefaultMaxLine)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			if errors.As(err, new(*wire.TooLongError)) {
				if err := send(&wire.Error{Code: wire.CodeBadRequest, Message: err.Error()}); err != nil {
					return err
				}
				// Skip the rest of the over-long line.
				for {
					_, err := br.ReadSlice('\n')
					if err == nil {
						break
					}
					if err != bufio.ErrBufferFull {
						return nil
					}
				}
				continue
			}
			return err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		env, derr := decodeEnvelope(line)
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
			reply := serveOne(ctx, s, env)
			if reply == nil {
				continue
			}
			if err := send(reply); err != nil {
				return err
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
		return nil // an unknown notification is ignored
	default:
		return &wire.Error{Code: wire.CodeBadRequest, Message: "unexpected envelope " + strconv.Quote(env.Type())}
	}
}

// Handler serves s over HTTP: one envelope per POST body, one envelope per
// response body (application/json). A shutdown is answered 204; a malformed
// body 400 with a bad_request error envelope.
func Handler(s Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST one CGP envelope", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, DefaultMaxLine+1))
		reply := func(status int, e wire.Envelope) {
			b, _ := encodeEnvelope(e)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(b)
		}
		if err != nil || len(body) > DefaultMaxLine {
			reply(http.StatusBadRequest, &wire.Error{Code: wire.CodeBadRequest, Message: "unreadable or over-long body"})
			return
		}
		env, err := decodeEnvelope(bytes.TrimSpace(body))
		if err != nil {
			reply(http.StatusBadRequest, &wire.Error{Code: wire.CodeBadRequest, Message: "malformed envelope: " + err.Error()})
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
