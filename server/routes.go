package server

import "net/http"

// addRoutes registers the JSON routes, one file per route.
func (h *Handler) addRoutes() {
	h.routes[PathPrompt] = route{http.MethodPost, jsonHandler(h, h.prompt)}
}

// Querier serves POST /v1/query.
type Querier interface{}
