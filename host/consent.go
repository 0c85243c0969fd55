package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ctxkit/ctxkit/frame"
)

// Grantor says who granted a consent receipt: a person or a policy.
type Grantor struct {
	Kind string `json:"kind"` // "human" or "policy"
	// ID names the person or policy that granted; required.
	ID string `json:"id"`
}

// ConsentReceipt is one append-only grant for one egress scope of one
// provider (§1.9). Receipts are never rewritten; withdrawing one appends a
// revocation to the store's journal.
type ConsentReceipt struct {
	// ProviderID is the host's local id for the provider the grant is for.
	ProviderID string `json:"provider_id"`
	// Scope is the one egress scope granted.
	Scope frame.EgressScope `json:"scope"`
	// ProviderName is the provider.name shown when consent was given.
	ProviderName string `json:"provider_name"`
	// ProviderVersion is the provider.version shown when consent was
	// given.
	ProviderVersion string `json:"provider_version"`
	// Grantor says who granted.
	Grantor Grantor `json:"grantor"`
	// GrantedAt is when the grant was made, in the protocol timestamp
	// grammar; the store stamps the current time when it is empty.
	GrantedAt string `json:"granted_at"`
	// ExpiresAt ends the grant (it holds while now < ExpiresAt), in the
	// protocol timestamp grammar; empty (omitted) means no expiry.
	ExpiresAt string `json:"expires_at,omitempty"`
}

// ConsentRecord is the legacy boolean consent for a provider declaring
// egress:true without scopes (§1.9). It never satisfies a scope gate.
type ConsentRecord struct {
	// ProviderID is the host's local id for the provider.
	ProviderID string `json:"provider_id"`
	// DataFlow is the data flow the provider declared when consent was
	// given.
	DataFlow frame.DataFlow `json:"data_flow"`
	// GrantedScope is a free-form label for what was granted (ctxkit
	// writes "egress").
	GrantedScope string `json:"granted_scope"`
	// GrantedAt is when consent was given, in the protocol timestamp
	// grammar; the store stamps the current time when it is empty.
	GrantedAt string `json:"granted_at,omitempty"`
}

// ConsentDecision is the outcome of evaluating a provider against the store.
type ConsentDecision struct {
	// Permitted: the host may send the provider a payload.
	Permitted bool
	// NeedsConsent: a legacy egress provider with no ConsentRecord.
	NeedsConsent bool
	// Missing lists the off-machine scopes without a receipt, in the
	// provider's declaration order.
	Missing []frame.EgressScope
}

// journalEntry is one line of the consent journal.
type journalEntry struct {
	Op         string            `json:"op"` // record | revoke | receipt | revoke_receipt
	Record     *ConsentRecord    `json:"record,omitempty"`
	Receipt    *ConsentReceipt   `json:"receipt,omitempty"`
	ProviderID string            `json:"provider_id,omitempty"`
	Scope      frame.EgressScope `json:"scope,omitempty"`
	At         string            `json:"at,omitempty"`
}

// ConsentStore holds consent: legacy per-provider records (replaceable,
// revocable) and an append-only ledger of scope receipts.
//
// Durability: a store opened with a path keeps a journal file, one JSON line
// per change, appended with O_APPEND and fsync'd before the call returns. An
// append-only journal fits the data exactly (receipts are an append-only
// ledger; revocations are themselves appended), a single short write plus
// fsync is all a grant costs, and a crash can only tear the final line, which
// was never acknowledged: Open drops such a torn tail. Any other damaged line
// is reported as an error, never read as "no consent". An embedded database
// would add a dependency for a file of a few hundred bytes.
//
// The methods take no context.Context: the readers work in memory, and the
// writers (Record, Revoke, Grant) append one short line to a local file and
// fsync it, which cannot be abandoned part-way without leaving the journal
// in doubt. A host that must bound them runs them on its own goroutine.
type ConsentStore struct {
	mu       sync.Mutex
	path     string
	records  map[string]ConsentRecord
	receipts []ConsentReceipt
	revoked  []journalEntry // revoke_receipt entries, in journal order
	// position of each receipt and revocation in the journal, so a later
	// grant re-enables an earlier revoked scope
	receiptSeq []int
	revokedSeq []int
	seq        int
	now        func() time.Time
}

// NewConsentStore returns an empty in-memory store (nothing persisted).
func NewConsentStore() *ConsentStore {
	return &ConsentStore{records: make(map[string]ConsentRecord), now: time.Now}
}

// OpenConsentStore opens (creating if absent) the journal at path and loads
// it. A torn final line left by a crash is dropped; any other malformed line
// is an error.
func OpenConsentStore(path string) (*ConsentStore, error) {
	s := NewConsentStore()
	s.path = path
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("consent: open %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("consent: read %s: %w", path, err)
	}
	good := len(data)
	if i := bytes.LastIndexByte(data, '\n'); i+1 != len(data) {
		// An unterminated last line was never acknowledged: drop it.
		good = i + 1
		if err := f.Truncate(int64(good)); err != nil {
			return nil, fmt.Errorf("consent: repair %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("consent: repair %s: %w", path, err)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data[:good]))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e journalEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("consent: load %s: line %d: %w", path, n, err)
		}
		if err := s.apply(e); err != nil {
			return nil, fmt.Errorf("consent: load %s: line %d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("consent: load %s: %w", path, err)
	}
	return s, nil
}

// DefaultConsentPath is the journal ctxkit's CLI uses when none is given:
// $XDG_CONFIG_HOME/ctxkit/consent.ndjson (or the OS equivalent).
func DefaultConsentPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("consent: locate config dir: %w", err)
	}
	return filepath.Join(dir, "ctxkit", "consent.ndjson"), nil
}

func (s *ConsentStore) apply(e journalEntry) error {
	s.seq++
	switch e.Op {
	case "record":
		if e.Record == nil || e.Record.ProviderID == "" {
			return errors.New("record entry without provider_id")
		}
		s.records[e.Record.ProviderID] = *e.Record
	case "revoke":
		delete(s.records, e.ProviderID)
	case "receipt":
		if e.Receipt == nil || e.Receipt.ProviderID == "" || e.Receipt.Scope == "" {
			return errors.New("receipt entry without provider_id or scope")
		}
		s.receipts = append(s.receipts, *e.Receipt)
		s.receiptSeq = append(s.receiptSeq, s.seq)
	case "revoke_receipt":
		s.revoked = append(s.revoked, e)
		s.revokedSeq = append(s.revokedSeq, s.seq)
	default:
		return fmt.Errorf("unknown op %q", e.Op)
	}
	return nil
}

// append writes e to the journal (fsync'd) and then applies it in memory.
func (s *ConsentStore) append(e journalEntry) error {
	if s.path != "" {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("consent: encode: %w", err)
		}
		if err := appendSync(s.path, append(line, '\n')); err != nil {
			return err
		}
	}
	return s.apply(e)
}

func appendSync(path string, line []byte) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("consent: append %s: %w", path, err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("consent: append %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("consent: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("consent: close %s: %w", path, err)
	}
	if errors.Is(statErr, os.ErrNotExist) {
		// A new file's directory entry must be durable too.
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return nil
}

func (s *ConsentStore) stamp(t string) string {
	if t != "" {
		return t
	}
	return s.now().UTC().Format("2006-01-02T15:04:05Z")
}

// Record stores (replacing any earlier one) a legacy consent record, stamping
// granted_at with the clock when unset. It returns once the record is durable.
func (s *ConsentStore) Record(r ConsentRecord) error {
	if r.ProviderID == "" {
		return errors.New("consent: record: empty provider id")
	}
	if err := printable("record", "provider id", r.ProviderID); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r.GrantedAt = s.stamp(r.GrantedAt)
	return s.append(journalEntry{Op: "record", Record: &r})
}

// Revoke removes the legacy record for provider and withdraws every receipt
// for it (all scopes when scope is empty). It reports whether anything was
// withdrawn.
func (s *ConsentStore) Revoke(provider string, scope frame.EgressScope) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	if _, ok := s.records[provider]; ok && scope == "" {
		if err := s.append(journalEntry{Op: "revoke", ProviderID: provider}); err != nil {
			return false, err
		}
		changed = true
	}
	var scopes []frame.EgressScope
	for _, r := range s.liveReceiptsLocked(provider) {
		if scope == "" || r.Scope == scope {
			scopes = append(scopes, r.Scope)
		}
	}
	sort.Slice(scopes, func(i, j int) bool { return scopes[i] < scopes[j] })
	for i, sc := range scopes {
		if i > 0 && scopes[i-1] == sc {
			continue
		}
		if err := s.append(journalEntry{Op: "revoke_receipt", ProviderID: provider, Scope: sc, At: s.stamp("")}); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

// Grant appends a scope receipt, stamping granted_at when unset. It returns
// once the receipt is durable: an acknowledged receipt survives a crash.
func (s *ConsentStore) Grant(r ConsentReceipt) error {
	if r.ProviderID == "" || r.Scope == "" {
		return errors.New("consent: grant: provider id and scope are required")
	}
	if r.Grantor.Kind != "human" && r.Grantor.Kind != "policy" {
		return fmt.Errorf("consent: grant: grantor kind %q is not human or policy", r.Grantor.Kind)
	}
	if strings.TrimSpace(r.Grantor.ID) == "" {
		return errors.New("consent: grant: grantor id is required")
	}
	for _, f := range [][2]string{{"provider id", r.ProviderID}, {"grantor id", r.Grantor.ID},
		{"provider name", r.ProviderName}, {"provider version", r.ProviderVersion}} {
		if err := printable("grant", f[0], f[1]); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r.GrantedAt = s.stamp(r.GrantedAt)
	return s.append(journalEntry{Op: "receipt", Receipt: &r})
}

// printable refuses a name that is not valid UTF-8 or holds a control
// character: consent is listed to a person, and a newline or a terminal
// escape in a name would let it forge or hide lines of that listing.
func printable(op, what, v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("consent: %s: %s is not valid UTF-8", op, what)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return fmt.Errorf("consent: %s: %s %q contains a control character", op, what, v)
	}
	return nil
}

// liveReceiptsLocked returns the provider's receipts not withdrawn by a later
// revocation.
func (s *ConsentStore) liveReceiptsLocked(provider string) []ConsentReceipt {
	out := []ConsentReceipt{} // never nil: lists encode as [], not null
	for i, r := range s.receipts {
		if provider != "" && r.ProviderID != provider {
			continue
		}
		if s.revokedAfter(r.ProviderID, r.Scope, s.receiptSeq[i]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s *ConsentStore) revokedAfter(provider string, scope frame.EgressScope, seq int) bool {
	for j, e := range s.revoked {
		if e.ProviderID == provider && e.Scope == scope && s.revokedSeq[j] > seq {
			return true
		}
	}
	return false
}

// Records returns the legacy records, sorted by provider id.
func (s *ConsentStore) Records() []ConsentRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ConsentRecord, 0, len(s.records))
	for _, r := range s.records {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderID < out[j].ProviderID })
	return out
}

// Receipts returns the receipts in force (not revoked), in grant order.
func (s *ConsentStore) Receipts() []ConsentReceipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.liveReceiptsLocked("")
}

// HasRecord reports whether a legacy record exists for provider.
func (s *ConsentStore) HasRecord(provider string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.records[provider]
	return ok
}

// HasReceipt reports whether a receipt for (provider, scope) is in force.
// Expiry is not applied (the §3.5 presence rule); see LiveReceipt.
func (s *ConsentStore) HasReceipt(provider string, scope frame.EgressScope) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.liveReceiptsLocked(provider) {
		if r.Scope == scope {
			return true
		}
	}
	return false
}

// LiveReceipt returns a receipt for (provider, scope) in force at now
// (now < expires_at, compared as protocol timestamps), for hosts that
// enforce expiry.
func (s *ConsentStore) LiveReceipt(provider string, scope frame.EgressScope, now time.Time) (ConsentReceipt, bool) {
	ts := frame.TimestampOf(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.liveReceiptsLocked(provider) {
		if r.Scope == scope && receiptLiveAt(r, ts) {
			return r, true
		}
	}
	return ConsentReceipt{}, false
}

// receiptLiveAt reports whether r holds at now: it states no expiry, or now
// is before it, compared as instants to the nanosecond. An expiry outside
// the protocol grammar holds at no time.
func receiptLiveAt(r ConsentReceipt, now frame.Timestamp) bool {
	if r.ExpiresAt == "" {
		return true
	}
	exp, err := frame.ParseTimestamp(r.ExpiresAt)
	return err == nil && now.Compare(exp) < 0
}

// Evaluate decides whether the host may send provider id a payload, exactly
// as §3.5: a provider declaring any off-machine scope needs a receipt in
// force for every such scope (a legacy record never satisfies a scope gate);
// otherwise a provider declaring egress needs a legacy record; otherwise it is
// permitted. Receipts count by presence (expiry is not applied).
func (s *ConsentStore) Evaluate(id string, info frame.ProviderInfo) ConsentDecision {
	off := info.DataFlow.OffMachineScopes()
	if len(off) > 0 {
		var missing []frame.EgressScope
		for _, sc := range off {
			if !s.HasReceipt(id, sc) {
				missing = append(missing, sc)
			}
		}
		return ConsentDecision{Permitted: len(missing) == 0, Missing: missing}
	}
	if info.DataFlow.Egress {
		ok := s.HasRecord(id)
		return ConsentDecision{Permitted: ok, NeedsConsent: !ok}
	}
	return ConsentDecision{Permitted: true}
}

// ConsentError reports a provider the consent gate stopped (C1, C2, C6): no
// payload was sent. Missing names the scopes lacking a receipt; when it is
// empty the provider needs a legacy consent record. It matches
// ErrConsentRequired.
type ConsentError struct {
	// Provider is the host's id for the stopped provider.
	Provider string
	// Missing lists the egress scopes with no current receipt; empty when
	// a legacy consent record is what is missing.
	Missing []frame.EgressScope
}

// Error names the missing scopes (or the missing consent record) and the
// ctxkit command that grants them.
func (e *ConsentError) Error() string {
	if len(e.Missing) == 0 {
		return fmt.Sprintf("host: query %q: %v (C1/C2): provider declares egress and no consent is recorded; grant it with: ctxkit consent grant %s --grantor NAME",
			e.Provider, ErrConsentRequired, e.Provider)
	}
	parts := make([]string, len(e.Missing))
	for i, m := range e.Missing {
		parts[i] = string(m)
	}
	return fmt.Sprintf("host: query %q: %v (C6): no receipt for egress scope(s) %s; grant with: ctxkit consent grant %s --scope %s --grantor NAME",
		e.Provider, ErrConsentRequired, strings.Join(parts, ", "), e.Provider, parts[0])
}

// Is matches ErrConsentRequired.
func (e *ConsentError) Is(target error) bool { return target == ErrConsentRequired }
