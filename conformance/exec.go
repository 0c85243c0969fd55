package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
)

// execProtocol names the cross-language composing-host protocol spoken by
// ExecComposingHost (docs/conformance.md).
const execProtocol = "ctxkit-composition/1"

// execScenario is what ExecComposingHost writes to the host's stdin: one
// scenario, with the command that starts each fixture provider as a CGP
// stdio provider.
type execScenario struct {
	// Protocol is execProtocol, the version of this exchange.
	Protocol string `json:"protocol"`
	// Scenario is the scenario's name.
	Scenario string `json:"scenario"`
	// Query is the query to fan out.
	Query frame.Query `json:"query"`
	// Providers are the fixture providers, in registration order.
	Providers []execProvider `json:"providers"`
}

// execProvider is one provider of an execScenario, in registration order.
type execProvider struct {
	// ID is the id to register the provider under.
	ID string `json:"id"`
	// Command starts the provider as a CGP stdio provider: program and
	// arguments.
	Command []string `json:"command"`
}

// ExecComposingHost certifies a composing host written in any language. For
// each scenario it runs Command with the scenario as JSON on stdin (an
// execScenario); the host starts the providers with the given commands,
// speaks CGP to them over stdio, composes, and prints its Composition as
// one JSON object on stdout: {"admitted": [[provider, frame_id]…],
// "dropped": [[provider, frame_id]…]}, exiting 0.
type ExecComposingHost struct {
	// Command is the host under test: program and arguments.
	Command []string
	// Dir is the host's working directory ("" = the caller's).
	Dir string
	// FixtureCommand starts `ctxkit fixture-provider`; "--scenario NAME
	// --provider ID" is appended per provider. Required.
	FixtureCommand []string
	// Timeout bounds one scenario run; 0 means 30 s.
	Timeout time.Duration
	// Stderr receives the host's stderr (its last 4 KiB also go into the
	// error of a failed run); nil keeps only the tail.
	Stderr io.Writer
}

// Target describes the host for a report.
func (h *ExecComposingHost) Target() string { return "exec: " + strings.Join(h.Command, " ") }

// input returns the JSON document written to the host's stdin for s.
func (h *ExecComposingHost) input(s *Scenario) ([]byte, error) {
	in := execScenario{Protocol: execProtocol, Scenario: s.Name, Query: s.Query}
	for _, p := range s.Providers {
		cmd := append(append([]string(nil), h.FixtureCommand...), "--scenario", s.Name, "--provider", p.ID)
		in.Providers = append(in.Providers, execProvider{ID: p.ID, Command: cmd})
	}
	b, err := cgpjson.MarshalNoEscape(in)
	if err != nil {
		return nil, fmt.Errorf("exec host: encode scenario: %w", err)
	}
	return append(b, '\n'), nil
}

// Compose runs the host on one scenario.
func (h *ExecComposingHost) Compose(ctx context.Context, s *Scenario) (*Composition, error) {
	if len(h.Command) == 0 {
		return nil, errors.New("exec host: no command")
	}
	if len(h.FixtureCommand) == 0 {
		return nil, errors.New("exec host: no fixture provider command")
	}
	input, err := h.input(s)
	if err != nil {
		return nil, err
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Command[0], h.Command[1:]...)
	cmd.Dir = h.Dir
	cmd.Env = os.Environ()
	cmd.Stdin = bytes.NewReader(input)
	var stdout bytes.Buffer
	tail := transport.NewTail(4 << 10)
	cmd.Stdout = &limitedWriter{w: &stdout, n: 16 << 20}
	if h.Stderr != nil {
		cmd.Stderr = io.MultiWriter(tail, h.Stderr)
	} else {
		cmd.Stderr = tail
	}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timeout %v)", ctx.Err(), timeout)
		}
		return nil, fmt.Errorf("exec host: %s: %w; stderr: %s", s.Name, err, strings.TrimSpace(tail.String()))
	}
	c, err := parseComposition(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("exec host: %s: %w", s.Name, err)
	}
	return c, nil
}

// parseComposition reads a host's output: one JSON object with "admitted"
// (required) and "dropped" (absent means none), each a list of
// [provider, frame_id] pairs. Unknown members are ignored; anything after
// the object other than white space is an error.
func parseComposition(b []byte) (*Composition, error) {
	var raw struct {
		Admitted *[]FrameRef `json:"admitted"`
		Dropped  *[]FrameRef `json:"dropped"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("composition output: %w: %s", err, clip(string(b), 200))
	}
	if dec.More() {
		return nil, fmt.Errorf("composition output: more than one JSON value: %s", clip(string(b), 200))
	}
	if raw.Admitted == nil {
		return nil, fmt.Errorf("composition output: no \"admitted\" member: %s", clip(string(b), 200))
	}
	c := &Composition{Admitted: *raw.Admitted}
	if raw.Dropped != nil {
		c.Dropped = *raw.Dropped
	}
	return c, nil
}

// limitedWriter fails once more than n bytes have been written.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.n {
		return 0, fmt.Errorf("output longer than the limit")
	}
	l.n -= len(p)
	return l.w.Write(p)
}
