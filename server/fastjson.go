package server

import (
	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// The compose and context routes decode their bodies with the strict
// one-pass cgpjson.Reader first, each frame by frame.(*Frame).ReadJSON, and
// with encoding/json only when either declines (see cgpjson.Reader for
// what that costs and saves). When they accept, the result is the one
// encoding/json would give: FuzzFastComposeMatchesJSON and
// FuzzFastContextMatchesJSON hold the routes to that, and frame's
// FuzzReadJSONMatchesUnmarshal the frame decoder.

var offerMembers = []string{"provider", "frame"}

// readOffers reads the offers array, each offer with a frame.
func readOffers(r *cgpjson.Reader, out *[]compose.Offer) bool {
	offers := []compose.Offer{}
	ok := r.Array(func() bool {
		var o compose.Offer
		_, ok := r.Object(offerMembers, func(k int) bool {
			if offerMembers[k] == "provider" {
				return r.Value(&o.Provider)
			}
			o.Frame = new(frame.Frame)
			return o.Frame.ReadJSON(r)
		})
		if !ok || o.Frame == nil {
			return false
		}
		offers = append(offers, o)
		return true
	})
	*out = offers
	return ok
}

var composeMembers = []string{"offers", "skip_invalid", "budget", "strategy", "quota", "weights",
	"default_weight", "packer", "placement", "previous", "sticky_margin", "min_prefix_tokens"}

// decodeFast decodes b's common shape; it declines a body without offers.
func (b *composeBody) decodeFast(body []byte) bool {
	r := cgpjson.NewReader(body)
	req := &b.ComposeRequest
	seen, ok := r.Object(composeMembers, func(k int) bool {
		switch composeMembers[k] {
		case "offers":
			return readOffers(r, &req.Offers)
		case "skip_invalid":
			return r.Value(&req.SkipInvalid)
		case "budget":
			return r.Value(&req.Budget)
		case "strategy":
			return r.Value(&req.Strategy)
		case "quota":
			return r.Value(&req.Quota)
		case "weights":
			return r.Into(&req.Weights)
		case "default_weight":
			return r.Value(&req.DefaultWeight)
		case "packer":
			return r.Value(&req.Packer)
		case "placement":
			return r.Value(&req.Placement)
		case "previous":
			return r.Into(&req.Previous)
		case "sticky_margin":
			return r.Value(&req.StickyMargin)
		}
		return r.Value(&req.MinPrefixTokens)
	})
	if !ok || seen&1 == 0 || !r.End() {
		*b = composeBody{}
		return false
	}
	return true
}

var contextMembers = composeMembers[:2]

// decodeFast decodes b's common shape; it declines a body without offers.
func (b *contextBody) decodeFast(body []byte) bool {
	r := cgpjson.NewReader(body)
	req := &b.ContextRequest
	seen, ok := r.Object(contextMembers, func(k int) bool {
		if contextMembers[k] == "offers" {
			return readOffers(r, &req.Offers)
		}
		return r.Value(&req.SkipInvalid)
	})
	if !ok || seen&1 == 0 || !r.End() {
		*b = contextBody{}
		return false
	}
	return true
}
