package api

// PromptRequest is the body of POST /v1/prompt: the parts of a prompt in
// order, each either the caller's own text or untrusted text to quote.
type PromptRequest struct {
	// Parts are rendered in order, separated by a blank line.
	Parts []PromptPart `json:"parts"`
	// Instruction replaces the prompt package's default instruction, the text
	// that opens a prompt holding untrusted blocks. Optional; must not be blank if given.
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
