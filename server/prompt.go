package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/ctxkit/ctxkit/prompt"
)

// PromptRequest is the body of POST /v1/prompt: the parts of a prompt in
// order, each either the caller's own text or untrusted text to quote.
type PromptRequest struct {
	// Parts are rendered in order, separated by a blank line.
	Parts []PromptPart `json:"parts"`
	// Instruction replaces prompt.DefaultInstruction, the text that opens a
	// prompt holding untrusted blocks. Optional; must not be blank if given.
	Instruction *string `json:"instruction,omitempty"`
	// Key, when set, derives the nonce from HMAC(key, label) so that the
	// same key, label and parts give byte-identical prompts (provider prompt
	// caches). At least 16 bytes; keep it secret. Without it the nonce is
	// random per request.
	Key string `json:"key,omitempty"`
	// Label selects the nonce derived from Key (per conversation, per task).
	Label string `json:"label,omitempty"`
}

// PromptPart is one part of a prompt: exactly one of Text and Untrusted.
type PromptPart struct {
	// Text is trusted text, rendered as is.
	Text *string `json:"text,omitempty"`
	// Untrusted is third-party or agent text, quoted in a nonce-fenced
	// block it cannot close. An empty string still gets its block.
	Untrusted *string `json:"untrusted,omitempty"`
}

// PromptResponse is the answer of POST /v1/prompt.
type PromptResponse struct {
	// Prompt is the rendered prompt.
	Prompt string `json:"prompt"`
	// Nonce is the nonce of its untrusted blocks (32 lowercase hex characters).
	Nonce string `json:"nonce"`
}

func (h *Handler) prompt(_ context.Context, req *PromptRequest) (any, error) {
	var p *prompt.Prompt
	switch {
	case req.Key != "":
		var err error
		if p, err = prompt.NewKeyed([]byte(req.Key), req.Label); err != nil {
			if errors.Is(err, prompt.ErrShortKey) {
				return nil, badRequest("key", "key: at least %d bytes are required", prompt.MinKeyLen)
			}
			return nil, badRequest("key", "key: %v", err)
		}
	case req.Label != "":
		return nil, badRequest("label", "label: applies only with a key")
	default:
		p = prompt.New()
	}
	if req.Instruction != nil {
		p.Instruction(*req.Instruction)
		if errors.Is(p.Err(), prompt.ErrBlankInstruction) {
			return nil, badRequest("instruction", "instruction: blank; omit it to use the default")
		}
	}
	for i, part := range req.Parts {
		field := fmt.Sprintf("parts[%d]", i)
		switch {
		case part.Text != nil && part.Untrusted != nil:
			return nil, badRequest(field, "%s: set one of text and untrusted, not both", field)
		case part.Text != nil:
			p.Text(*part.Text)
		case part.Untrusted != nil:
			p.Untrusted(prompt.External(*part.Untrusted))
		default:
			return nil, badRequest(field, "%s: set one of text and untrusted", field)
		}
	}
	s, err := p.Build()
	if err != nil {
		return nil, badRequest("", "prompt: %v", err)
	}
	return &PromptResponse{Prompt: s, Nonce: p.Nonce()}, nil
}
