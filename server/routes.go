package server

import "net/http"

// addRoutes registers the JSON routes, one file per route.
func (h *Handler) addRoutes() {
	h.routes[PathCompose] = route{http.MethodPost, jsonHandler(h, h.compose)}
	h.routes[PathContext] = route{http.MethodPost, jsonHandler(h, h.context)}
	h.routes[PathAssess] = route{http.MethodPost, jsonHandler(h, h.assess)}
	h.routes[PathPrompt] = route{http.MethodPost, jsonHandler(h, h.prompt)}
	h.routes[PathQuery] = route{http.MethodPost, jsonHandler(h, h.queryRoute)}
}
