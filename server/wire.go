package server

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ctxkit/ctxkit/compose"
	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/server/api"
)

// wireOffer is Offer as encoding/json decodes it when the fast reader (see
// fastReader) declines a body. The frame stays raw until its index is
// known, so that frame.Frame.UnmarshalJSON, the one decoder of the frame's
// members and required-member rule, can report a fault as offers[i].frame.
// The extra pass costs nothing on the common path, which never comes here.
type wireOffer struct {
	// Provider is the offering provider id.
	Provider string `json:"provider"`
	// Frame is the offered frame's JSON; empty or "null" when absent.
	Frame json.RawMessage `json:"frame"`
}

// offersFrom decodes the frames of ws, naming the offer and member of a
// missing required member, a missing frame or a member of the wrong type.
func offersFrom(ws []wireOffer) ([]compose.Offer, *api.Error) {
	out := make([]compose.Offer, len(ws))
	for i, w := range ws {
		path := fmt.Sprintf("offers[%d].frame", i)
		if len(w.Frame) == 0 || string(w.Frame) == "null" {
			return nil, api.BadRequest(path, "%s: required", path)
		}
		f := new(frame.Frame)
		if err := f.UnmarshalJSON(w.Frame); err != nil {
			return nil, frameError(path, err)
		}
		out[i] = compose.Offer{Provider: w.Provider, Frame: f}
	}
	return out, nil
}

// frameError turns a frame decoding error into a 400 naming the member
// under path.
func frameError(path string, err error) *api.Error {
	var mm *frame.MissingMemberError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mm) && mm.Object == "ContextFrame":
		f := path + "." + mm.Member
		return api.BadRequest(f, "%s: required member of a ContextFrame is missing", f)
	case errors.As(err, &mm):
		return api.BadRequest(path, "%s: %s lacks required member %q", path, mm.Object, mm.Member)
	case errors.As(err, &typ) && typ.Field != "":
		f := path + "." + jsonPath(typ.Field)
		return api.BadRequest(f, "decode body: member %q: expected %s, got JSON %s", f, typ.Type, typ.Value)
	}
	return api.BadRequest(path, "%s: %v", path, err)
}
