// Package conformance certifies CGP providers, hosts and composing hosts.
//
// It runs three suites, each producing a typed [Report] whose JSON form is
// the one of docs/protocol.md §5.5:
//
//   - [RunComposition] holds a composing host — anything that turns several
//     providers' replies into the frames that reach a prompt — to the rules
//     that bind that step: the shared token bound, the total partition,
//     quarantine of what the host's own audit rejected, determinism, and
//     (beyond the seed) arrival-order independence, duplicate evidence
//     admitted once, and no admitted frame that breaks a protocol rule.
//     [ExecComposingHost] drives a host written in any language through a
//     small JSON protocol on stdin/stdout (docs/conformance.md).
//   - [RunProvider] drives one provider over stdio or HTTP through the 13
//     checks of docs/protocol.md §5.1 plus an unknown-envelope check.
//   - [RunHost] runs the host scenarios of docs/protocol.md §5.3 against ctxkit's
//     own host.
//
// Every check is adversarial with a well-behaved counterpart: a target that
// refuses everything fails the counterpart instead of passing vacuously.
package conformance
