package server

import "net/http"

// addRoutes registers the JSON routes, one file per route.
func (h *Handler) addRoutes() {
	h.routes[PathCompose] = route{http.MethodPost, jsonHandler(h, h.compose)}
	h.routes[PathContext] = route{http.MethodPost, jsonHandler(h, h.context)}
	h.routes[PathPrompt] = route{http.MethodPost, jsonHandler(h, h.prompt)}
}

// Querier serves POST /v1/query.
type Querier interface{}
