package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/wire"
)

// Reasons a held frame is not reused: the stable spellings of
// VerifyDrop.Reason.
const (
	dropStale             = "stale"              // provider says the content changed (V4)
	dropGone              = "gone"               // provider says the frame no longer exists (V4)
	dropUnknown           = "unknown"            // provider answered unknown, or gave no verdict (V2)
	dropNoDigest          = "no_digest"          // identity has no digest: never reused unchecked (D3), not sent (V1)
	dropVerifyUnsupported = "verify_unsupported" // provider did not declare verify: not asked
	dropUnknownProvider   = "unknown_provider"   // no provider registered under that id
	dropConsentRequired   = "consent_required"   // the consent gate refuses the provider now
	dropVerifyFailed      = "verify_failed"      // the verify request failed (timeout, crash, error)
)

// VerifyDrop is a held frame that must not be reused.
type VerifyDrop struct {
	// Frame is the dropped identity.
	Frame frame.ID `json:"frame"`
	// Reason says why the frame must not be reused, one of "stale" and
	// "gone" (the provider's verdict, V4; after "gone" alone a requery
	// cannot bring the evidence back), "unknown" (an unknown or missing
	// verdict, V2), "no_digest" (never reused unchecked, D3), and, without
	// asking the provider, "verify_unsupported", "unknown_provider",
	// "consent_required" or "verify_failed".
	Reason string `json:"reason"`
	// ReplacementDigest is the provider's current digest for a stale frame
	// (rule V4); empty (omitted) otherwise.
	ReplacementDigest string `json:"replacement_digest,omitempty"`
	// Detail adds context to Reason (the verify error, the verdict seen);
	// empty (omitted) when there is none.
	Detail string `json:"detail,omitempty"`
}

// VerifyOutcome partitions the held identities: every one is either retained
// (its provider answered valid) or dropped with a reason. Default deny.
type VerifyOutcome struct {
	// Retained lists the identities the provider confirmed valid, safe to
	// reuse (rule V3).
	Retained []frame.ID `json:"retained"`
	// Dropped lists every other held identity with its reason.
	Dropped []VerifyDrop `json:"dropped"`
}

// Verify asks each provider whether held frames are still current (V1–V4):
// identities are grouped by provider (first-seen order) and each provider is
// asked once, concurrently; only digest-bearing identities are sent;
// providers that did not declare verify are not asked; verdicts are matched
// by identity, not position; a missing verdict counts as unknown; only valid
// retains a frame. The outcome is in the order of held.
func (h *Host) Verify(ctx context.Context, held []frame.ID) VerifyOutcome {
	var order []string
	groups := make(map[string][]frame.ID)
	for _, id := range held {
		if _, ok := groups[id.Provider]; !ok {
			order = append(order, id.Provider)
		}
		groups[id.Provider] = append(groups[id.Provider], id)
	}
	type verdict struct {
		retained bool
		drop     VerifyDrop
	}
	results := make(map[string]map[frame.ID]verdict)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, pid := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := h.verifyGroup(ctx, pid, groups[pid])
			mu.Lock()
			results[pid] = make(map[frame.ID]verdict)
			for id, d := range got {
				if d == nil {
					results[pid][id] = verdict{retained: true}
				} else {
					results[pid][id] = verdict{drop: *d}
				}
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	var out VerifyOutcome
	for _, id := range held {
		v := results[id.Provider][id]
		if v.retained {
			out.Retained = append(out.Retained, id)
		} else {
			d := v.drop
			d.Frame = id
			out.Dropped = append(out.Dropped, d)
		}
	}
	return out
}

// verifyGroup returns, per identity, nil (retain) or the drop.
func (h *Host) verifyGroup(ctx context.Context, pid string, ids []frame.ID) map[frame.ID]*VerifyDrop {
	out := make(map[frame.ID]*VerifyDrop, len(ids))
	all := func(r, detail string) map[frame.ID]*VerifyDrop {
		for _, id := range ids {
			if _, done := out[id]; !done {
				out[id] = &VerifyDrop{Reason: r, Detail: detail}
			}
		}
		return out
	}
	e, err := h.lookup(pid)
	if err != nil {
		return all(dropUnknownProvider, err.Error())
	}
	if err := h.handshake(ctx, e); err != nil {
		return all(dropVerifyFailed, err.Error())
	}
	if !e.ack.Capabilities.Verify {
		return all(dropVerifyUnsupported, "provider did not declare verify")
	}
	if err := h.gate(e); err != nil {
		return all(dropConsentRequired, err.Error())
	}
	var send []frame.ID
	seen := make(map[frame.ID]bool)
	for _, id := range ids {
		if !id.Verifiable() {
			out[id] = &VerifyDrop{Reason: dropNoDigest, Detail: "no content digest: requery instead"}
			continue
		}
		if !seen[id] {
			seen[id] = true
			send = append(send, id)
		}
	}
	if len(send) == 0 {
		return out
	}
	vctx, cancel := context.WithTimeout(ctx, h.opts.QueryTimeout)
	defer cancel()
	verdicts, err, late := awaitCall(vctx, func(ctx context.Context) ([]wire.Verdict, error) { return e.p.Verify(ctx, send) })
	if late {
		err = newErr(pid, "verify", ErrTimeout, "no verified within "+h.opts.QueryTimeout.String(), nil)
	}
	if err != nil {
		return all(dropVerifyFailed, e.secrets.scrubError(err).Error())
	}
	byID := make(map[frame.ID]wire.Verdict, len(verdicts))
	for _, v := range verdicts {
		if _, dup := byID[v.Frame]; !dup {
			byID[v.Frame] = v
		}
	}
	for _, id := range send {
		v, ok := byID[id]
		switch {
		case !ok:
			out[id] = &VerifyDrop{Reason: dropUnknown, Detail: "no verdict returned"}
		case v.Status == wire.StatusValid:
			out[id] = nil
		case v.Status == wire.StatusStale:
			out[id] = &VerifyDrop{Reason: dropStale, ReplacementDigest: v.ReplacementDigest}
		case v.Status == wire.StatusGone:
			out[id] = &VerifyDrop{Reason: dropGone}
		default:
			out[id] = &VerifyDrop{Reason: dropUnknown, Detail: "verdict " + string(v.Status)}
		}
	}
	return out
}

// ProvenanceStatus is the result of re-reading file provenance, spelled as
// it is in JSON.
type ProvenanceStatus string

// Provenance verification results.
const (
	ProvenanceVerified   ProvenanceStatus = "verified"   // the addressed bytes hash to the declared digest
	ProvenanceMismatch   ProvenanceStatus = "mismatch"   // they do not
	ProvenanceUnreadable ProvenanceStatus = "unreadable" // missing digest/uri, bad range, unreadable file
	ProvenanceRefused    ProvenanceStatus = "refused"    // outside the trusted roots, symlink escape, non-local authority: not read
	ProvenanceNotFile    ProvenanceStatus = "not_file"   // not a "file" provenance link
)

// ProvenanceCheck is the outcome of VerifyFileProvenance.
type ProvenanceCheck struct {
	// Status is the verdict of the re-read.
	Status ProvenanceStatus `json:"status"`
	// Expected is the digest the provenance link declared; empty when it
	// declared none.
	Expected string `json:"expected,omitempty"`
	// Actual is the "sha256:<hex>" digest of the bytes read; empty
	// (omitted) unless the bytes were read (verified or mismatch).
	Actual string `json:"actual,omitempty"`
	// Reason says why the link was unreadable or refused; empty (omitted)
	// otherwise.
	Reason string `json:"reason,omitempty"`
}

// VerifyFileProvenance re-reads the bytes a file provenance link addresses
// (its file:// uri, and its L<a>[-<b>] range or, when the range is absent,
// the whole file; a range sent as "" is unreadable) and compares
// their SHA-256 with the declared digest. It reads only inside roots: a
// non-local authority, a path outside every root, or a path whose symbolic
// links resolve outside them is refused without being opened.
func VerifyFileProvenance(p frame.Provenance, roots []string) ProvenanceCheck {
	unread := func(r string) ProvenanceCheck {
		return ProvenanceCheck{Status: ProvenanceUnreadable, Expected: p.Digest, Reason: r}
	}
	refuse := func(r string) ProvenanceCheck {
		return ProvenanceCheck{Status: ProvenanceRefused, Expected: p.Digest, Reason: r}
	}
	if p.Type != frame.ProvenanceFile {
		return ProvenanceCheck{Status: ProvenanceNotFile}
	}
	if p.Digest == "" || !frame.WellFormedDigest(p.Digest) {
		return unread("digest missing or malformed (F5)")
	}
	if p.URI == "" {
		return unread("uri missing")
	}
	u, err := url.Parse(p.URI)
	if err != nil || u.Scheme != "file" {
		return unread("not a file:// uri")
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return refuse("non-local authority " + u.Host)
	}
	path := u.Path
	if !filepath.IsAbs(path) {
		return unread("file uri path is not absolute")
	}
	path = filepath.Clean(path)
	if len(roots) == 0 {
		return refuse("the host trusts no root directory")
	}
	lexical, resolvedRoots := false, make([]string, 0, len(roots))
	for _, r := range roots {
		ra, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		if within(path, ra) {
			lexical = true
		}
		if rr, err := filepath.EvalSymlinks(ra); err == nil {
			resolvedRoots = append(resolvedRoots, rr)
			if within(path, rr) {
				lexical = true
			}
		}
	}
	if !lexical {
		return refuse("path is outside the trusted roots")
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return unread("cannot resolve path")
	}
	inside := false
	for _, rr := range resolvedRoots {
		if within(real, rr) {
			inside = true
		}
	}
	if !inside {
		return refuse("symbolic link resolves outside the trusted roots")
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return unread("not a readable regular file")
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return unread("read failed")
	}
	if p.Has(frame.MemberRange) { // a range sent as "" is malformed, not the whole file
		lr, err := frame.ParseLineRange(p.Range)
		if err != nil {
			return unread("bad range " + p.Range + ": " + err.Error())
		}
		sel, ok := selectLines(data, lr.Start, lr.End)
		if !ok {
			return unread("range " + p.Range + " starts past the end of the file")
		}
		data = sel
	}
	sum := sha256.Sum256(data)
	actual := "sha256:" + hex.EncodeToString(sum[:])
	if actual == p.Digest {
		return ProvenanceCheck{Status: ProvenanceVerified, Expected: p.Digest, Actual: actual}
	}
	return ProvenanceCheck{Status: ProvenanceMismatch, Expected: p.Digest, Actual: actual}
}

// within reports whether path is root or below it.
func within(path, root string) bool {
	if path == root {
		return true
	}
	return strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// selectLines returns lines a..b (1-based, inclusive; LF kept; CR kept; a
// trailing LF does not start a line; b clamped to the last line).
func selectLines(data []byte, a, b int) ([]byte, bool) {
	line, start := 1, 0
	for line < a {
		i := bytes.IndexByte(data[start:], '\n')
		if i < 0 {
			return nil, false
		}
		start += i + 1
		line++
	}
	if start >= len(data) {
		return nil, false
	}
	end := start
	for line <= b {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			end = len(data)
			break
		}
		end += i + 1
		line++
		if end >= len(data) {
			break
		}
	}
	return data[start:end], true
}
