package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxkit/ctxkit/prompt"
	"github.com/ctxkit/ctxkit/server/api"
)

func (h *Handler) prompt(_ context.Context, req *api.PromptRequest) (any, error) {
	var p *prompt.Prompt
	switch {
	case req.Key != "":
		var err error
		if p, err = prompt.NewKeyed([]byte(req.Key), req.Label); err != nil {
			if errors.Is(err, prompt.ErrShortKey) {
				return nil, api.BadRequest("key", "key: at least %d bytes are required", prompt.MinKeyLen)
			}
			return nil, api.BadRequest("key", "key: %v", err)
		}
	case req.Label != "":
		return nil, api.BadRequest("label", "label: applies only with a key")
	default:
		p = prompt.New()
	}
	if req.Instruction != nil {
		p.Instruction(*req.Instruction)
		if errors.Is(p.Err(), prompt.ErrBlankInstruction) {
			return nil, api.BadRequest("instruction", "instruction: blank; omit it to use the default")
		}
	}
	if len(req.Parts) > h.maxFrames {
		// Each part costs a fence of its own: the answer grows with the
		// parts however small they are.
		return nil, h.tooMany("parts", len(req.Parts))
	}
	for i, part := range req.Parts {
		field := fmt.Sprintf("parts[%d]", i)
		switch {
		case part.Text != nil && part.Untrusted != nil:
			return nil, api.BadRequest(field, "%s: set one of text and untrusted, not both", field)
		case part.Text != nil:
			p.Text(*part.Text)
		case part.Untrusted != nil:
			p.Untrusted(prompt.External(*part.Untrusted))
		default:
			return nil, api.BadRequest(field, "%s: set one of text and untrusted", field)
		}
	}
	s, err := p.Build()
	if err != nil {
		return nil, api.BadRequest("", "prompt: %v", err)
	}
	return &api.PromptResponse{Prompt: s, Nonce: p.Nonce()}, nil
}
