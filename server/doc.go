// Package server exposes ctxkit over HTTP as JSON: composition
// (POST /v1/compose), the determinism floor (POST /v1/context), model-window
// assessment (POST /v1/assess), untrusted-text prompts (POST /v1/prompt) and
// a fan-out to configured providers (POST /v1/query), with GET /healthz and
// GET /metrics (Prometheus text format).
//
// [New] returns an [http.Handler] that can be mounted in any Go server;
// `ctxkit serve` runs it on loopback. The handler is a thin adapter: every
// answer is computed by the packages compose, window, prompt and host.
//
// Every request body must be application/json, valid UTF-8, and within the
// configured limits. Errors are JSON, {"error": {"code", "message", "rule",
// "field"}}, with status 400 for malformed input (naming the member), 413 for
// a body or frame count over the limit, 415 for a wrong content type, 422
// for a CGP protocol rule violation (naming the rule, e.g. "F3"), 408/504
// for timeouts and 503 for a route that is not configured. A 500 means a bug,
// never bad input. The handler keeps no state between requests besides its
// metrics and the configured providers, so replicas can sit behind any load
// balancer.
//
// docs/openapi.yaml describes every route with examples; a test sends each
// example to the handler.
package server
