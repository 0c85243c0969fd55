package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the longest line (or HTTP body) a Decoder or
// ReadBody accepts by default: 16 MiB, the reference host's limit.
const DefaultMaxLineBytes = 16 << 20

// ContentType is the media type of an envelope sent as an HTTP body.
const ContentType = "application/json"

// TooLongError reports a line or body longer than the decoder's limit. The
// decoder never holds more than the limit in memory.
type TooLongError struct {
	What  string // "line" or "body"
	Limit int64  // the limit in bytes
}

// Error names the limit.
func (e *TooLongError) Error() string {
	return fmt.Sprintf("%s longer than the %d-byte limit", e.What, e.Limit)
}

// DecoderOptions configure a Decoder. A nil *DecoderOptions or a zero field
// means the default.
type DecoderOptions struct {
	// MaxLineBytes bounds one line, excluding its line feed. Default
	// DefaultMaxLineBytes.
	MaxLineBytes int
}

// Decoder reads NDJSON envelopes, one per line, from a stream. Trailing white
// space (including CR) is trimmed from each line; blank lines are skipped; a
// last line without a line feed still counts. A line over the limit is
// reported as a *DecodeError wrapping *TooLongError as soon as the limit is
// passed, without waiting for the line's end (a peer streaming an endless
// line is refused at once); the next read skips the rest of that line and
// decoding continues with the line after it. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	r    *bufio.Reader
	max  int
	line int
	buf  []byte
	skip bool  // the rest of an over-long line is still to be discarded
	err  error // sticky read error
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader, opts *DecoderOptions) *Decoder {
	max := DefaultMaxLineBytes
	if opts != nil && opts.MaxLineBytes > 0 {
		max = opts.MaxLineBytes
	}
	size := 64 << 10
	if max < size {
		size = max + 1
		if size < 16 {
			size = 16
		}
	}
	return &Decoder{r: bufio.NewReaderSize(r, size), max: max}
}

// Line returns the 1-based number of the line most recently read (0 before
// the first).
func (d *Decoder) Line() int { return d.line }

// ReadLine returns the next non-blank line with trailing white space
// trimmed. The slice is valid until the next call. At the end of the stream it
// returns io.EOF; a read failure is returned wrapped.
func (d *Decoder) ReadLine() ([]byte, error) {
	for {
		line, err := d.readRaw()
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, " \t\r\n")
		if len(line) > 0 {
			return line, nil
		}
	}
}

// readRaw reads one physical line, enforcing the limit.
func (d *Decoder) readRaw() ([]byte, error) {
	if d.err != nil {
		return nil, d.err
	}
	if d.skip {
		if err := d.skipLine(); err != nil {
			return nil, err
		}
	}
	d.buf = d.buf[:0]
	for {
		chunk, err := d.r.ReadSlice('\n')
		if len(d.buf)+len(bytes.TrimSuffix(chunk, []byte("\n"))) > d.max {
			d.line++
			d.buf = d.buf[:0]
			switch {
			case err == nil:
			case errors.Is(err, bufio.ErrBufferFull):
				d.skip = true
			case errors.Is(err, io.EOF):
				d.err = io.EOF
			default:
				d.err = fmt.Errorf("read envelope: %w", err)
			}
			return nil, &DecodeError{Line: d.line, Err: &TooLongError{What: "line", Limit: int64(d.max)}}
		}
		d.grow(len(chunk))
		d.buf = append(d.buf, chunk...)
		switch {
		case err == nil:
			d.line++
			return d.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			d.err = io.EOF
			if len(d.buf) == 0 {
				return nil, io.EOF
			}
			d.line++
			return d.buf, nil
		default:
			d.err = fmt.Errorf("read envelope: %w", err)
			return nil, d.err
		}
	}
}

// skipLine discards the rest of the over-long line already reported.
func (d *Decoder) skipLine() error {
	for {
		_, err := d.r.ReadSlice('\n')
		switch {
		case err == nil:
			d.skip = false
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			d.err = io.EOF
			return d.err
		default:
			d.err = fmt.Errorf("read envelope: %w", err)
			return d.err
		}
	}
}

// grow makes room for n more bytes, doubling capacity up to the limit so an
// over-long line costs at most about twice the limit in allocations.
func (d *Decoder) grow(n int) {
	need := len(d.buf) + n
	if need <= cap(d.buf) {
		return
	}
	c := 2 * cap(d.buf)
	if c > d.max+1 {
		c = d.max + 1
	}
	if c < need {
		c = need
	}
	b := make([]byte, len(d.buf), c)
	copy(b, d.buf)
	d.buf = b
}

// Decode reads and decodes the next envelope. It returns io.EOF at the end of
// the stream; a line that is not a valid envelope is a *DecodeError naming
// the line, after which Decode may be called again for the next line.
func (d *Decoder) Decode() (Envelope, error) {
	line, err := d.ReadLine()
	if err != nil {
		return nil, err
	}
	env, err := unmarshal(line)
	if err != nil {
		return nil, &DecodeError{Line: d.line, Err: err}
	}
	return env, nil
}

// encoder writes envelopes as NDJSON, one line and one Write per envelope.
// An encoder is not safe for concurrent use.
type encoder struct {
	w   io.Writer
	buf []byte
}

// newEncoder returns an encoder writing to w.
func newEncoder(w io.Writer) *encoder { return &encoder{w: w} }

// Encode writes env's exact encoding followed by a line feed.
func (e *encoder) Encode(env Envelope) error {
	b, err := appendEnvelope(e.buf[:0], env)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	e.buf = b
	if _, err := e.w.Write(b); err != nil {
		return fmt.Errorf("write envelope: %w", err)
	}
	return nil
}

// ReadBody decodes the one envelope of an HTTP body, reading at most limit
// bytes (DefaultMaxLineBytes when limit <= 0). A longer body is a
// *DecodeError wrapping *TooLongError.
func ReadBody(r io.Reader, limit int64) (Envelope, error) {
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read envelope body: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, &DecodeError{Err: &TooLongError{What: "body", Limit: limit}}
	}
	return Unmarshal(bytes.TrimSpace(b))
}

// WriteBody writes env's exact encoding as an HTTP body (no line feed).
func WriteBody(w io.Writer, env Envelope) error {
	b, err := Marshal(env)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write envelope body: %w", err)
	}
	return nil
}
