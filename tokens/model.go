package tokens

import "strings"

// ForModel returns the counter for a model name: an exact counter when the
// model's encoding is known and compiled in (OpenAI families: o200k_base
// for GPT-4o, GPT-4.1, GPT-4.5, GPT-5 and the o-series; cl100k_base for
// GPT-4, GPT-3.5 and the text-embedding-3/ada-002 models), [Safe]
// otherwise. A provider prefix ("openai/gpt-5", "azure/gpt-4o") is ignored
// and case does not matter. Each call returns a new counter with its own
// cache; keep the one you use.
func ForModel(model string) Counter {
	if name := encodingForModel(model); name != "" {
		c, _ := ByName(name)
		return c
	}
	return Safe{}
}

// encodingForModel returns the name of the exact encoding for model
// ("o200k_base" or "cl100k_base"), or "" when no exact tokenizer is known
// (Anthropic, Gemini and other models).
func encodingForModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case m == "":
		return ""
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "chatgpt-4o"),
		strings.HasPrefix(m, "gpt-4.1"), strings.HasPrefix(m, "gpt-4.5"),
		strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "gpt-oss"),
		strings.HasPrefix(m, "codex-"),
		isOSeries(m):
		return nameO200kBase
	case strings.HasPrefix(m, "gpt-4"), strings.HasPrefix(m, "gpt-3.5"),
		strings.HasPrefix(m, "gpt-35"), strings.HasPrefix(m, "text-embedding-3"),
		strings.HasPrefix(m, "text-embedding-ada-002"):
		return nameCl100kBase
	}
	return ""
}

// isOSeries reports whether m names an OpenAI reasoning model: "o1",
// "o3-mini", "o4-mini-2025-04-16" ...
func isOSeries(m string) bool {
	if len(m) < 2 || m[0] != 'o' || m[1] < '1' || m[1] > '9' {
		return false
	}
	return len(m) == 2 || m[2] == '-'
}

// ByName returns a counter by its Name: "canonical", "conservative",
// "safe", "o200k_base" or "cl100k_base". The second result is false for
// any other name.
func ByName(name string) (Counter, bool) {
	switch name {
	case nameCanonical:
		return canonical{}, true
	case nameConservative:
		return conservative{}, true
	case nameSafe:
		return Safe{}, true
	case nameO200kBase:
		return o200kBase(), true
	case nameCl100kBase:
		return cl100kBase(), true
	}
	return nil, false
}
