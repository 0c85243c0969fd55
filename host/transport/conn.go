package transport

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ctxkit/ctxkit/wire"
)

// Connection carries encoded CGP envelopes to and from one peer.
// Read and Write may be called concurrently with each other; concurrent
// Writes are serialised, each envelope written whole.
type Connection interface {
	// Read returns the next envelope the peer sent, trailing white space
	// trimmed, blank lines skipped. It returns io.EOF at the end of the
	// stream and a *wire.DecodeError wrapping *wire.TooLongError for a line
	// over the limit (after which the next Read continues past it). The
	// slice is the caller's to keep.
	Read() ([]byte, error)
	// Write sends one envelope (without a line feed) before ctx's deadline.
	Write(ctx context.Context, env []byte) error
	// Close releases the connection; a Read or Write waiting on it returns.
	Close() error
}

// Transport opens Connections to one peer.
type Transport interface {
	Dial(ctx context.Context) (Connection, error)
}

// Every transport a host dials yields a Connection; the compiler checks
// each one here.
var (
	_ Transport = Stdio{}
	_ Transport = HTTP{}
)

// stream is a Connection over a byte stream, one envelope a line.
type stream struct {
	rmu    sync.Mutex
	dec    *wire.Decoder
	wmu    sync.Mutex
	w      io.Writer
	closer func() error
}

// Stream returns a Connection reading envelopes from r and writing them to
// w, one per line; a line longer than maxLine bytes (0: the protocol's
// wire.DefaultMaxLineBytes) is refused. Close runs closeFn when it is not
// nil. A provider serving its own stdin and stdout uses Stream.
func Stream(r io.Reader, w io.Writer, maxLine int, closeFn func() error) Connection {
	return &stream{dec: wire.NewDecoder(r, &wire.DecoderOptions{MaxLineBytes: maxLine}), w: w, closer: closeFn}
}

func (s *stream) Read() ([]byte, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	line, err := s.dec.ReadLine()
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), line...), nil
}

// deadliner is a writer whose writes can be bounded in time (an *os.File
// pipe end, a net.Conn).
type deadliner interface{ SetWriteDeadline(time.Time) error }

func (s *stream) Write(ctx context.Context, env []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if d, ok := s.w.(deadliner); ok {
		dl, _ := ctx.Deadline()
		_ = d.SetWriteDeadline(dl)
	}
	buf := make([]byte, 0, len(env)+1)
	if _, err := s.w.Write(append(append(buf, env...), '\n')); err != nil {
		return fmt.Errorf("write envelope: %w", err)
	}
	return nil
}

func (s *stream) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer()
}

// Pipe returns two connected in-memory Connections: what one writes, the
// other reads. Closing either ends both directions.
func Pipe() (Connection, Connection) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	closeAll := func() error {
		for _, c := range []io.Closer{ar, aw, br, bw} {
			_ = c.Close()
		}
		return nil
	}
	return Stream(ar, aw, 0, closeAll), Stream(br, bw, 0, closeAll)
}
