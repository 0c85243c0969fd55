package server

// ruleOf reports the protocol rule named by a typed rule error in err's chain.
func ruleOf(err error) (rule, field string, ok bool) {
	return "", "", false
}

func (h *Handler) addRoutes() {}

// Querier serves POST /v1/query.
type Querier interface{}
