package wire

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
)

func violation(r rule.Rule, field, detail string) *frame.RuleError {
	return &frame.RuleError{Rule: r, Field: field, Detail: detail}
}

// validate checks every rule a single envelope can break: the version family
// of handshakes (H1), provider info (H2, C5, U3) and capabilities (E1) of a
// handshake_ack, the query, every frame of a result (F1-F5, F17, D1, P1-P4,
// B3, G1, G2), the identities of verify and verified (D1), verdict statuses
// and their replacement digests (V4), and a non-blank error message. Fields
// are JSON paths from the envelope ("result.frames[0].citation_label"). An
// *Unknown envelope has nothing to check.
func validate(env Envelope) frame.Violations {
	var v frame.Violations
	switch e := env.(type) {
	case *Handshake:
		v = append(v, checkVersion(e.ProtocolVersion)...)
	case *HandshakeAck:
		v = append(v, checkVersion(e.ProtocolVersion)...)
		v = append(v, e.Provider.Validate().Prefix("provider")...)
		v = append(v, e.Capabilities.Validate().Prefix("capabilities")...)
	case *Query:
		v = append(v, e.Query.Validate().Prefix("query")...)
	case *Frames:
		v = append(v, e.Result.validate().Prefix("result")...)
	case *Verify:
		for i, id := range e.Request.Frames {
			v = append(v, id.Validate().Prefix("request.frames["+strconv.Itoa(i)+"]")...)
		}
	case *Verified:
		for i := range e.Response.Verdicts {
			v = append(v, e.Response.Verdicts[i].validate().Prefix("response.verdicts["+strconv.Itoa(i)+"]")...)
		}
	case *Error:
		if isBlank(e.Message) {
			v = append(v, violation(rule.Schema, "message", "error message is blank"))
		}
	}
	return v
}

func checkVersion(version string) frame.Violations {
	if !Compatible(version, ProtocolVersion) {
		return frame.Violations{violation(rule.H1, "protocol_version",
			"version "+strconv.Quote(version)+" is not in family "+Family(ProtocolVersion))}
	}
	if !wellFormedVersion(version) {
		return frame.Violations{violation(rule.Schema, "protocol_version",
			"version "+strconv.Quote(version)+" is not spelled contextgraph/MAJOR.MINOR[-draft]")}
	}
	return nil
}

// validate checks every frame of the result; fields are paths from the result
// ("frames[2].score").
func (r *Result) validate() frame.Violations {
	var v frame.Violations
	for i := range r.Frames {
		v = append(v, r.Frames[i].Validate().Prefix("frames["+strconv.Itoa(i)+"]")...)
	}
	return v
}

// validateFor checks the rules that bind a result to the query it answers:
// the sum of declared token_cost within max_tokens (B1), at most max_frames
// frames (B4), and no frame of an unrequested kind when the query names
// kinds (Q1). It does not repeat the per-frame checks of Validate.
func (r *Result) validateFor(q *frame.Query) frame.Violations {
	var v frame.Violations
	var sum uint64
	for i := range r.Frames {
		sum += uint64(r.Frames[i].TokenCost)
	}
	if sum > uint64(q.MaxTokens) {
		v = append(v, violation(rule.B1, "frames", "declared token_cost sums to "+strconv.FormatUint(sum, 10)+
			", over max_tokens "+strconv.FormatUint(uint64(q.MaxTokens), 10)))
	}
	if uint64(len(r.Frames)) > uint64(q.MaxFrames) {
		v = append(v, violation(rule.B4, "frames", strconv.Itoa(len(r.Frames))+" frames returned, over max_frames "+
			strconv.FormatUint(uint64(q.MaxFrames), 10)))
	}
	for i := range r.Frames {
		if !q.WantsKind(r.Frames[i].Kind) {
			v = append(v, violation(rule.Q1, "frames["+strconv.Itoa(i)+"].kind", "kind "+strconv.Quote(string(r.Frames[i].Kind))+" was not requested"))
		}
	}
	return v
}

// validate checks a verdict: its identity (D1), a known status, and a
// replacement digest only on a stale verdict and well-formed (V4).
func (vd *Verdict) validate() frame.Violations {
	v := vd.Frame.Validate().Prefix("frame")
	if !vd.Status.isKnown() {
		v = append(v, violation(rule.Schema, "status", "unknown verdict status "+strconv.Quote(string(vd.Status))))
	}
	if vd.ReplacementDigest != "" {
		if vd.Status != StatusStale {
			v = append(v, violation(rule.V4, "replacement_digest", "a replacement digest is allowed only on a stale verdict, not "+strconv.Quote(string(vd.Status))))
		}
		if !frame.WellFormedDigest(vd.ReplacementDigest) {
			v = append(v, violation(rule.D1, "replacement_digest", "malformed digest "+strconv.Quote(vd.ReplacementDigest)))
		}
	}
	return v
}

// Checker validates a session: each envelope with Validate, plus the rules
// that span envelopes. It remembers the provider's handshake_ack (for E1 on
// later query embeddings and H4 correlation) and the queries awaiting an
// answer (for B1, B4 and Q1 on the frames that answer them). A frames or
// error envelope answers the pending query with the same id; one without an
// id, or with an id no pending query has, answers the oldest (an H4
// violation when the provider declared correlation). The zero Checker is
// ready to use.
type Checker struct {
	caps    *frame.Capabilities
	pending []*Query
}

// Check validates env in the context of the envelopes checked before it.
func (c *Checker) Check(env Envelope) frame.Violations {
	v := validate(env)
	switch e := env.(type) {
	case *HandshakeAck:
		caps := e.Capabilities
		c.caps = &caps
	case *Query:
		if c.caps != nil {
			v = append(v, frame.CheckQueryEmbedding(&e.Query, c.caps).Prefix("query")...)
		}
		c.pending = append(c.pending, e)
	case *Frames:
		if q, echoed := c.answered(e.ID); q != nil {
			v = append(v, e.Result.validateFor(&q.Query).Prefix("result")...)
			v = append(v, c.checkEcho(q, e.ID, echoed)...)
		}
	case *Error:
		if q, echoed := c.answered(e.ID); q != nil && !echoed {
			v = append(v, c.checkEcho(q, e.ID, echoed)...)
		}
	}
	return v
}

// checkEcho applies H4 to a reply with id answering q: a provider that
// declared correlation echoes the query id verbatim. echoed is false when
// the reply carried an id that matches no pending query.
func (c *Checker) checkEcho(q *Query, id string, echoed bool) frame.Violations {
	if c.caps == nil || !c.caps.Correlation {
		return nil
	}
	switch {
	case !echoed:
		return frame.Violations{violation(rule.H4, "id", "reply id "+strconv.Quote(id)+" answers no pending query; the provider declared correlation and must echo the query id verbatim")}
	case q.ID != "" && id != q.ID:
		return frame.Violations{violation(rule.H4, "id", "the provider declared correlation but did not echo query id "+strconv.Quote(q.ID))}
	}
	return nil
}

// answered removes and returns the pending query an answer with id replies
// to, or nil when none is pending. A reply without an id, or with an id that
// matches no pending query (echoed false), answers the oldest.
func (c *Checker) answered(id string) (q *Query, echoed bool) {
	if len(c.pending) == 0 {
		return nil, true
	}
	i := 0
	echoed = true
	if id != "" {
		i = -1
		for j, p := range c.pending {
			if p.ID == id {
				i = j
				break
			}
		}
		if i < 0 {
			i, echoed = 0, false
		}
	}
	q = c.pending[i]
	c.pending = append(c.pending[:i], c.pending[i+1:]...)
	return q, echoed
}

func isBlank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }
