// Package host talks to Context Graph Protocol providers on a composing
// host's behalf.
//
// A Host registers providers under host-side ids (the routing and consent
// key, and the provider part of every frame.ID they serve) over three
// transports: in-process (InProcess, any serve.Server), stdio (Stdio: a child
// process started by transport.Stdio, with a demultiplexing reader for
// correlated queries), and HTTP (HTTP: one envelope per POST through
// transport.HTTP, plain http only to loopback, bearer Credentials that never
// print).
//
// Each provider is handshaken once (version family H1/H3, H2, C5 scope
// consistency, representation/resolve consistency) and gated on consent
// (consent.Store: legacy records and append-only scope receipts, evaluated as
// docs/protocol.md §3 says) before any payload is sent. QueryAll and QueryAllBudgeted fan a
// query out concurrently; every leg ends in a typed Outcome, and each reply
// is audited (B2 budget lies and B4 floods drop the leg; Q1, B3 and frame
// validity exclude the frame or drop the leg, per AuditPolicy) before its
// frames reach the composer through FanOut.Compose. Verify revalidates held
// frames (V1–V4); VerifyFileProvenance re-reads file provenance under trusted
// roots; FanOut.UsageReport and attributionReport account for what was served.
//
// The provider side, serving a Go value to other CGP hosts, is package
// serve; the byte transports are package transport.
package host
