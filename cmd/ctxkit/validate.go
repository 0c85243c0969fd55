package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ctxkit/ctxkit/internal/safetext"
	"github.com/ctxkit/ctxkit/wire"
)

const validateUsage = `usage: ctxkit validate [FILE|-] [--format text|json] [--session]

Check CGP input against the protocol rules. FILE (or standard input when it
is "-" or absent) holds NDJSON -- envelopes, bare frames, bare queries, or
{"provider": ID, "frame": FRAME} offers -- or one JSON document: one of
those, an array of them, or a fixture holding them in its members (the
upstream {"cases": [{"source", "expected_normalized", "input"}]} and
{"missing": FRAME, "blank": FRAME} shapes among them).

--session checks NDJSON envelopes as one recorded session, adding the rules
that span envelopes: B1 and B4 (a result within its query's budget and frame
limit), Q1 (only requested kinds), E1 (query embedding length against the
provider's fingerprint) and H4 (query id echoed).

Each violation prints as "line N: RULE field: detail". --format json (or
--json) prints one report object instead:
  {"input", "valid", "items", "violations": [{"line","rule","field","detail"}],
   "errors": [{"line","error"}]}

Exit status: 0 everything valid, 1 a rule is violated or the input holds
nothing to validate (said on stderr), 2 usage error or input that cannot be
read or parsed.

Example:
  ctxkit validate internal/fixtures/cgp/context-frame.valid.json
`

func runValidate(_ context.Context, args []string, s stdio) int {
	asJSON := false
	var opts wire.CheckOptions
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprint(s.out, validateUsage)
			return exitOK
		case a == "--json" || a == "-json":
			asJSON = true
		case a == "--format" || a == "-format" || strings.HasPrefix(a, "--format=") || strings.HasPrefix(a, "-format="):
			_, v, ok := strings.Cut(a, "=")
			if !ok && i+1 < len(args) {
				i++
				v = args[i]
			}
			switch v {
			case "text":
				asJSON = false
			case "json":
				asJSON = true
			default:
				fmt.Fprintf(s.err, "validate: --format wants text or json, got %q\n\n%s", v, validateUsage)
				return exitUsage
			}
		case a == "--session" || a == "-session":
			opts.Session = true
		case len(a) > 1 && a[0] == '-':
			fmt.Fprintf(s.err, "validate: unknown flag %s\n\n%s", a, validateUsage)
			return exitUsage
		default:
			files = append(files, a)
		}
	}
	if len(files) > 1 {
		fmt.Fprintf(s.err, "validate: one input at a time, got %d\n\n%s", len(files), validateUsage)
		return exitUsage
	}
	path := ""
	if len(files) == 1 {
		path = files[0]
	}
	name, in, err := openInput(path, s.in)
	if err != nil {
		fmt.Fprintf(s.err, "validate: %v\n", err)
		return exitUsage
	}
	defer in.Close()
	rep, err := wire.CheckInput(in, &opts)
	if err != nil {
		fmt.Fprintf(s.err, "validate: %s: %v\n", name, err)
		return exitUsage
	}
	if asJSON {
		writeValidateJSON(s.out, name, rep)
	} else {
		for _, f := range rep.Violations {
			fmt.Fprintln(s.out, safetext.Escape(f.String()))
		}
		for _, e := range rep.Errors {
			fmt.Fprintf(s.err, "validate: %s: %s\n", name, safetext.Escape(e.Error()))
		}
		switch {
		case !rep.Checked() && len(rep.Errors) == 0:
			// Said below, on stderr.
		case rep.Valid():
			fmt.Fprintf(s.out, "%s: valid (%d %s)\n", name, rep.Items, plural(rep.Items, "item"))
		case len(rep.Violations) > 0:
			fmt.Fprintf(s.out, "%s: %d %s in %d %s\n", name, len(rep.Violations), plural(len(rep.Violations), "violation"),
				rep.Items, plural(rep.Items, "item"))
		}
	}
	switch {
	case len(rep.Errors) > 0:
		return exitUsage
	case !rep.Checked():
		fmt.Fprintf(s.err, "validate: %s: nothing to validate: no frame, envelope, offer or query found\n", name)
		return exitFailed
	case len(rep.Violations) > 0:
		return exitFailed
	}
	return exitOK
}

func writeValidateJSON(w io.Writer, name string, rep *wire.Report) {
	type lineError struct {
		Line  int    `json:"line"`
		Error string `json:"error"`
	}
	out := struct {
		Input      string         `json:"input"`
		Valid      bool           `json:"valid"`
		Items      int            `json:"items"`
		Violations []wire.Finding `json:"violations"`
		Errors     []lineError    `json:"errors"`
	}{Input: name, Valid: rep.Valid(), Items: rep.Items, Violations: rep.Violations, Errors: []lineError{}}
	if out.Violations == nil {
		out.Violations = []wire.Finding{}
	}
	for _, e := range rep.Errors {
		le := lineError{Error: e.Error()}
		var de *wire.DecodeError
		if errors.As(e, &de) {
			le.Line = de.Line
		}
		out.Errors = append(out.Errors, le)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
