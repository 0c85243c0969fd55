package host

import (
	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
)

// attrAllowance is the number of bytes the host expects a frame's id, kind
// and citation label (or title) to take together once escaped as fence
// attributes. A budgeted fan-out reserves, out of each leg's share, the
// fence of every frame the leg may return, with this many bytes of
// attributes; a frame whose attributes are longer costs more than was
// reserved for it, and the composer's packing then decides.
const attrAllowance = 64

// FrameChrome is the rendered cost, in budget tokens, the host reserves for
// the fence of one frame served by provider: the fixed fence bytes, the
// escaped provider id and attrAllowance bytes of attributes, rounded up to
// whole budget tokens. A frame whose attributes fit the allowance and whose
// content holds no fence-like token renders at most at its token_cost plus
// FrameChrome (ceil(a/4)+ceil(b/4) ≥ ceil((a+b)/4)).
func FrameChrome(provider string) uint32 {
	fence := compose.RenderedLen(provider, &frame.Frame{})
	return uint32((fence + attrAllowance + 3) / 4)
}

// legShare turns a leg's share of a global budget (rendered budget tokens)
// into the query the provider is sent. The share must hold the fences of
// the frames as well as their content, so the host reserves FrameChrome
// for each frame it allows: max_frames becomes min(max_frames, share /
// (2 × chrome)), at least 1, so that fences take at most half the share
// unless a single frame needs more; max_tokens becomes share − max_frames ×
// chrome. An honest provider (Σ token_cost ≤ max_tokens, len(frames) ≤
// max_frames) whose frames fit the attribute allowance then renders within
// its share. ok is false when the share cannot hold one fence and one
// content token; the leg is then not queried. A template asking for no
// frames (max_frames 0) is sent the whole share.
func legShare(q *frame.Query, provider string, share uint32) (frame.Query, bool) {
	out := *q
	out.MaxTokens = share
	if q.MaxFrames == 0 {
		return out, true
	}
	chrome := FrameChrome(provider)
	if share <= chrome {
		return out, false
	}
	n := min(q.MaxFrames, max(1, share/(2*chrome)))
	out.MaxFrames = n
	out.MaxTokens = share - n*chrome
	return out, true
}
