package server

import (
	"net/http"

	"github.com/ctxkit/ctxkit/server/api"
)

// addRoutes registers the JSON routes, one file per route.
func (h *Handler) addRoutes() {
	h.routes[api.PathCompose] = route{http.MethodPost, jsonHandler(h, h.compose)}
	h.routes[api.PathContext] = route{http.MethodPost, jsonHandler(h, h.context)}
	h.routes[api.PathAssess] = route{http.MethodPost, jsonHandler(h, h.assess)}
	h.routes[api.PathPrompt] = route{http.MethodPost, jsonHandler(h, h.prompt)}
	h.routes[api.PathQuery] = route{http.MethodPost, jsonHandler(h, h.queryRoute)}
}
