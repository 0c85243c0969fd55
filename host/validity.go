package host

import "github.com/ctxkit/ctxkit/frame"

// frameViolations returns every protocol rule f breaks (frame.Frame.Validate:
// F1–F5, D1, P1–P4, B3, G1–G2 and the schema checks).
func frameViolations(f *frame.Frame) frame.Violations { return f.Validate() }
