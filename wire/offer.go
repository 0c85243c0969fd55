package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// Offer is one frame offered by one provider: the input format of
// composition, one {"provider": ID, "frame": FRAME} object per NDJSON line
// (or the elements of one JSON array). Provider is the host's id for the
// provider. Line is the offer's 1-based line (or array position) in its
// input; it is not encoded.
type Offer struct {
	// Provider is the host's id for the offering provider.
	Provider string `json:"provider"`
	// Frame is the offered frame.
	Frame frame.Frame `json:"frame"`
	// Line is the 1-based line (or array position) the offer came from;
	// not encoded.
	Line int `json:"-"`
}

// Identity returns the offered frame's canonical identity.
func (o *Offer) Identity() frame.ID { return o.Frame.Identity(o.Provider) }

// AppendJSON appends the offer's encoding ({"provider":…,"frame":…}) to dst.
func (o *Offer) AppendJSON(dst []byte) ([]byte, error) {
	w := cgpjson.W{B: dst}
	w.Open()
	w.Str("provider", o.Provider)
	w.Key("frame")
	var err error
	if w.B, err = o.Frame.AppendJSON(w.B); err != nil {
		return dst, fmt.Errorf("encode offer: %w", err)
	}
	w.Close()
	return w.B, nil
}

// MarshalJSON returns the offer's encoding.
func (o Offer) MarshalJSON() ([]byte, error) { return o.AppendJSON(nil) }

// UnmarshalJSON decodes an offer; provider and frame are required.
func (o *Offer) UnmarshalJSON(b []byte) error {
	var aux struct {
		Provider *string      `json:"provider"`
		Frame    *frame.Frame `json:"frame"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.Provider == nil {
		return &frame.MissingMemberError{Object: "offer", Member: "provider"}
	}
	if aux.Frame == nil {
		return &frame.MissingMemberError{Object: "offer", Member: "frame"}
	}
	*o = Offer{Provider: *aux.Provider, Frame: *aux.Frame, Line: o.Line}
	return nil
}

// ReadOffers reads offers from r: NDJSON, one offer per line, or a single
// JSON array of offers. Lines and the array are bounded as by a Decoder with
// opts. It returns every offer, or the first failure as a *DecodeError
// naming its line (or array position). It does not validate the frames.
func ReadOffers(r io.Reader, opts *DecoderOptions) ([]Offer, error) {
	d := NewDecoder(r, opts)
	first, err := d.ReadLine()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if first[0] == '[' {
		doc, err := d.rest(first)
		if err != nil {
			return nil, err
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(doc, &raw); err != nil {
			return nil, &DecodeError{Line: 1, Err: err}
		}
		out := make([]Offer, len(raw))
		for i, el := range raw {
			out[i].Line = i + 1
			if err := json.Unmarshal(el, &out[i]); err != nil {
				return nil, &DecodeError{Line: i + 1, Err: err}
			}
		}
		return out, nil
	}
	var out []Offer
	for line := first; ; {
		o := Offer{Line: d.Line()}
		if err := decodeLine(line, &o); err != nil {
			return nil, &DecodeError{Line: d.Line(), Err: err}
		}
		out = append(out, o)
		line, err = d.ReadLine()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// decodeLine decodes one JSON line into v after checking it is UTF-8.
func decodeLine(line []byte, v any) error {
	if !utf8.Valid(line) {
		return ErrInvalidUTF8
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
