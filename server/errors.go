package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ctxkit/ctxkit/server/api"
)

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error *api.Error `json:"error"`
}

// writeError writes e as the JSON error envelope with its status.
func writeError(w http.ResponseWriter, e *api.Error) {
	if e.Status == 0 {
		e.Status = http.StatusInternalServerError
	}
	b, err := json.Marshal(errorBody{Error: e})
	if err != nil { // cannot happen for strings; keep a valid body anyway
		b = []byte(`{"error":{"code":"internal","message":"encoding the error failed"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(b, '\n'))
}
