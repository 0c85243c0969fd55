package server

import (
	"errors"
	"net/http"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/rule"
	"github.com/ctxkit/ctxkit/server/api"
)

// ruleOf reports the first protocol rule named by a typed rule error in
// err's chain (a *frame.RuleError, possibly inside frame.Violations).
func ruleOf(err error) (r rule.Rule, field string, ok bool) {
	var re *frame.RuleError
	if errors.As(err, &re) {
		return re.Rule, re.Field, true
	}
	return "", "", false
}

// decodeRuleError maps the typed errors the data model returns while
// decoding: a protocol rule broken at decode time is a 422 naming the rule,
// a missing member a 400 naming it.
func decodeRuleError(err error) *api.Error {
	var mm *frame.MissingMemberError
	if errors.As(err, &mm) {
		return api.BadRequest(mm.Member, "decode body: %s lacks required member %q", mm.Object, mm.Member)
	}
	if r, field, ok := ruleOf(err); ok {
		return &api.Error{Status: http.StatusUnprocessableEntity, Code: api.CodeRuleViolation, Rule: r, Field: field,
			Message: "decode body: " + err.Error()}
	}
	return nil
}
