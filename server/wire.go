package server

import (
	"fmt"

	"github.com/ctxkit/ctxkit/frame"
)

// The request decoders read offers with wireFrame instead of
// frame.Frame.UnmarshalJSON: the same members and the same required-member
// rule, decoded in one pass over the bytes instead of three (the frame's
// own decoder re-parses the value it is handed). On 20 offers of 1 KiB this
// is most of a request's decoding time. FuzzWireFrameMatchesFrame checks
// that both decoders agree on every input.

// plainFrame has frame.Frame's fields and JSON tags but none of its methods.
type plainFrame frame.Frame

// wireFrame decodes a ContextFrame, noting which required members were
// present (a required member given as null counts as missing, as in
// frame.Frame.UnmarshalJSON).
type wireFrame struct {
	plainFrame
	// ID and the members below are required; nil means absent or null.
	ID *string `json:"id"`
	// Kind is the frame kind.
	Kind *frame.Kind `json:"kind"`
	// Title is the frame title.
	Title *string `json:"title"`
	// Score is the provider-local score (f32).
	Score *float32 `json:"score"`
	// TokenCost is the declared cost (u32).
	TokenCost *uint32 `json:"token_cost"`
	// ValidFrom and the other timestamps shadow plainFrame's so that one
	// sent as "" is marked present (frame.Frame.Set), as
	// frame.Frame.UnmarshalJSON marks it; nil means absent or null.
	ValidFrom *string `json:"valid_from"`
	// ValidTo is the end of the validity window.
	ValidTo *string `json:"valid_to"`
	// RecordedAt is when the evidence was recorded.
	RecordedAt *string `json:"recorded_at"`
}

// frame returns the decoded frame, or the first missing required member in
// frame.Frame.UnmarshalJSON's order.
func (w *wireFrame) frame() (*frame.Frame, *frame.MissingMemberError) {
	missing := ""
	switch {
	case w.ID == nil:
		missing = "id"
	case w.Kind == nil:
		missing = "kind"
	case w.Title == nil:
		missing = "title"
	case w.Score == nil:
		missing = "score"
	case w.TokenCost == nil:
		missing = "token_cost"
	}
	if missing != "" {
		return nil, &frame.MissingMemberError{Object: "ContextFrame", Member: missing}
	}
	f := frame.Frame(w.plainFrame)
	f.ID, f.Kind, f.Title, f.Score, f.TokenCost = *w.ID, *w.Kind, *w.Title, *w.Score, *w.TokenCost
	for _, o := range [...]struct {
		m frame.FrameMember
		v *string
	}{{frame.MemberValidFrom, w.ValidFrom}, {frame.MemberValidTo, w.ValidTo}, {frame.MemberRecordedAt, w.RecordedAt}} {
		if o.v != nil {
			f.Set(o.m, *o.v)
		}
	}
	return &f, nil
}

// wireOffer is Offer as decoded from a request.
type wireOffer struct {
	// Provider is the offering provider id.
	Provider string `json:"provider"`
	// Frame is the offered frame; nil when absent or null.
	Frame *wireFrame `json:"frame"`
}

// offersFrom converts decoded offers, naming the offer and member of a
// missing required member or frame.
func offersFrom(ws []wireOffer) ([]Offer, *Error) {
	out := make([]Offer, len(ws))
	for i, w := range ws {
		if w.Frame == nil {
			f := fmt.Sprintf("offers[%d].frame", i)
			return nil, badRequest(f, "%s: required", f)
		}
		fr, mm := w.Frame.frame()
		if mm != nil {
			f := fmt.Sprintf("offers[%d].frame.%s", i, mm.Member)
			return nil, badRequest(f, "%s: required member of a ContextFrame is missing", f)
		}
		out[i] = Offer{Provider: w.Provider, Frame: fr}
	}
	return out, nil
}
