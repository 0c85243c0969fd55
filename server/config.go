package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Config is the JSON file read by `ctxkit serve --config FILE`:
//
//	{
//	  "limits": {"max_body_bytes": 8388608, "max_frames": 5000, "timeout": "30s"},
//	  "providers": [
//	    {"id": "docs", "files": "./docs"},
//	    {"id": "tickets", "command": ["./tickets-provider", "--stdio"]},
//	    {"id": "wiki", "url": "https://wiki.example/cgp", "token_env": "WIKI_TOKEN"}
//	  ]
//	}
//
// A relative "files" directory or command path is resolved against the
// config file's directory. Credentials are never written in the file: a
// provider names the environment variable that holds its bearer token.
type Config struct {
	Limits    Limits           `json:"limits"`
	Providers []ProviderConfig `json:"providers"`
}

// Limits are the request limits of a config file; zero means the default.
type Limits struct {
	MaxBodyBytes int64    `json:"max_body_bytes,omitempty"`
	MaxFrames    int      `json:"max_frames,omitempty"`
	Timeout      Duration `json:"timeout,omitempty"`
}

// Apply copies the non-zero limits into o.
func (l Limits) Apply(o *Options) {
	if l.MaxBodyBytes > 0 {
		o.MaxBodyBytes = l.MaxBodyBytes
	}
	if l.MaxFrames > 0 {
		o.MaxFrames = l.MaxFrames
	}
	if l.Timeout > 0 {
		o.Timeout = time.Duration(l.Timeout)
	}
}

// ProviderConfig configures one provider of /v1/query. Exactly one of
// Files, Command and URL is set.
type ProviderConfig struct {
	// ID is the provider id used in frame identities and citations.
	ID string `json:"id"`
	// Files is a directory served by the built-in files provider.
	Files string `json:"files,omitempty"`
	// Command is the argv of a CGP provider spoken to over stdio.
	Command []string `json:"command,omitempty"`
	// URL is a CGP provider over HTTP (https://, or http:// on loopback).
	URL string `json:"url,omitempty"`
	// TokenEnv names the environment variable holding the bearer token
	// for URL. The token itself is never logged.
	TokenEnv string `json:"token_env,omitempty"`
}

// Duration is a time.Duration written in JSON as a Go duration string
// ("30s", "1m30s").
type Duration time.Duration

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	if v < 0 {
		return fmt.Errorf("duration: %q is negative", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// LoadConfig reads and checks a config file, resolving relative paths
// against its directory.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	for i := range c.Providers {
		p := &c.Providers[i]
		if p.Files != "" && !filepath.IsAbs(p.Files) {
			p.Files = filepath.Join(dir, p.Files)
		}
		if len(p.Command) > 0 && !filepath.IsAbs(p.Command[0]) && filepath.Base(p.Command[0]) != p.Command[0] {
			p.Command[0] = filepath.Join(dir, p.Command[0])
		}
	}
	return c, nil
}

// ParseConfig decodes a config document, refusing unknown members (a typo
// in a config file should not be silently ignored) and checking providers.
func ParseConfig(b []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode: unexpected data after the JSON object")
	}
	if c.Limits.MaxBodyBytes < 0 || c.Limits.MaxFrames < 0 {
		return nil, fmt.Errorf("limits: negative values are not allowed")
	}
	seen := map[string]bool{}
	for i, p := range c.Providers {
		if p.ID == "" {
			return nil, fmt.Errorf("providers[%d]: id is required", i)
		}
		if seen[p.ID] {
			return nil, fmt.Errorf("providers[%d]: duplicate id %q", i, p.ID)
		}
		seen[p.ID] = true
		n := 0
		for _, set := range []bool{p.Files != "", len(p.Command) > 0, p.URL != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("providers[%d] (%s): set exactly one of files, command, url", i, p.ID)
		}
		if p.TokenEnv != "" && p.URL == "" {
			return nil, fmt.Errorf("providers[%d] (%s): token_env applies only to url providers", i, p.ID)
		}
	}
	return &c, nil
}
