package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/compose"
)

// ReadOffers reads composer offers from r: NDJSON, one
// {"provider": ID, "frame": FRAME} per line, or a single JSON array of
// them. Lines and the array are bounded as by a Decoder with opts. It
// returns every offer with lines[i] the 1-based line (or array position)
// of offers[i], or the first failure as a *DecodeError naming its line. It
// does not validate the frames.
func ReadOffers(r io.Reader, opts *DecoderOptions) (offers []compose.Offer, lines []int, err error) {
	d := NewDecoder(r, opts)
	first, err := d.ReadLine()
	if errors.Is(err, io.EOF) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if first[0] == '[' {
		doc, err := d.rest(first)
		if err != nil {
			return nil, nil, err
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(doc, &raw); err != nil {
			return nil, nil, &DecodeError{Line: 1, Err: err}
		}
		offers, lines = make([]compose.Offer, len(raw)), make([]int, len(raw))
		for i, el := range raw {
			lines[i] = i + 1
			if err := json.Unmarshal(el, &offers[i]); err != nil {
				return nil, nil, &DecodeError{Line: i + 1, Err: err}
			}
		}
		return offers, lines, nil
	}
	for line := first; ; {
		var o compose.Offer
		if err := decodeLine(line, &o); err != nil {
			return nil, nil, &DecodeError{Line: d.Line(), Err: err}
		}
		offers, lines = append(offers, o), append(lines, d.Line())
		line, err = d.ReadLine()
		if errors.Is(err, io.EOF) {
			return offers, lines, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// decodeLine decodes one JSON line into v after checking it is UTF-8.
func decodeLine(line []byte, v any) error {
	if !utf8.Valid(line) {
		return errInvalidUTF8
	}
	return json.Unmarshal(line, v)
}

// rest returns first, a line feed, and everything left in the stream, as one
// document bounded by the decoder's limit.
func (d *Decoder) rest(first []byte) ([]byte, error) {
	doc := append([]byte(nil), first...)
	doc = append(doc, '\n')
	more, err := io.ReadAll(io.LimitReader(d.r, int64(d.max-len(doc)+1)))
	if err != nil {
		return nil, fmt.Errorf("read document: %w", err)
	}
	doc = append(doc, more...)
	if len(doc) > d.max {
		return nil, &DecodeError{Line: d.line, Err: &TooLongError{What: "document", Limit: int64(d.max)}}
	}
	return doc, nil
}
