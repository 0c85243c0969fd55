package server

import (
	"context"

	"github.com/ctxkit/ctxkit/server/api"
	"github.com/ctxkit/ctxkit/window"
)

func (h *Handler) assess(_ context.Context, req *api.AssessRequest) (any, error) {
	in, err := req.Inputs()
	if err != nil {
		return nil, err
	}
	return window.Assess(in), nil
}
