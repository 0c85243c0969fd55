package consent

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

// Receipt is one append-only grant for one egress scope of one
// provider (docs/protocol.md §1.3, C6). Receipts are never rewritten; withdrawing one appends a
// revocation to the store's journal.
//
// A receipt is bound to the provider it was granted for: when ProviderName
// or Endpoint is set, a provider announcing another name, or reached at
// another endpoint, under the same ProviderID is not covered. An empty
// field binds nothing (receipts written before binding existed).
type Receipt struct {
	// ProviderID is the host's local id for the provider the grant is for.
	ProviderID string `json:"provider_id"`
	// Scope is the one egress scope granted.
	Scope frame.EgressScope `json:"scope"`
	// ProviderName is the provider.name shown when consent was given; a
	// provider announcing another name is not covered.
	ProviderName string `json:"provider_name"`
	// ProviderVersion is the provider.version shown when consent was
	// given (recorded, not enforced: a provider upgrade keeps consent).
	ProviderVersion string `json:"provider_version"`
	// Endpoint is where the provider is reached, as the host names it:
	// its URL, or its command line (program and arguments joined by
	// spaces). A provider reached elsewhere is not covered.
	Endpoint string `json:"endpoint,omitempty"`
	// Grantor says who granted.
	Grantor Grantor `json:"grantor"`
	// GrantedAt is when the grant was made, in the protocol timestamp
	// grammar; the store stamps the current time when it is empty.
	GrantedAt string `json:"granted_at"`
	// ExpiresAt ends the grant (it holds while now < ExpiresAt), in the
	// protocol timestamp grammar; empty (omitted) means no expiry.
	ExpiresAt string `json:"expires_at,omitempty"`
}

// Record is the legacy boolean consent for a provider declaring
// egress:true without scopes (docs/protocol.md C1). It never satisfies a scope gate. Its
// ProviderName and Endpoint bind it as a receipt's do.
type Record struct {
	// ProviderID is the host's local id for the provider.
	ProviderID string `json:"provider_id"`
	// DataFlow is the data flow the provider declared when consent was
	// given.
	DataFlow frame.DataFlow `json:"data_flow"`
	// GrantedScope is a free-form label for what was granted (ctxkit
	// writes "egress").
	GrantedScope string `json:"granted_scope"`
	// ProviderName, when set, is the only provider.name covered.
	ProviderName string `json:"provider_name,omitempty"`
	// Endpoint, when set, is the only endpoint covered (see
	// Receipt.Endpoint).
	Endpoint string `json:"endpoint,omitempty"`
	// GrantedAt is when consent was given, in the protocol timestamp
	// grammar; the store stamps the current time when it is empty.
	GrantedAt string `json:"granted_at,omitempty"`
	// ExpiresAt ends the consent (it holds while now < ExpiresAt); empty
	// means no expiry.
	ExpiresAt string `json:"expires_at,omitempty"`
	// Grantor, when set, says who consented (records written before it
	// existed have none); it is checked as a receipt's grantor is.
	Grantor *Grantor `json:"grantor,omitempty"`
}

// Decision is the outcome of evaluating a provider against the store.
type Decision struct {
	// Permitted: the host may send the provider a payload.
	Permitted bool
	// NeedsConsent: a legacy egress provider with no Record in
	// force for it.
	NeedsConsent bool
	// Missing lists the off-machine scopes without a receipt covering the
	// provider, in the provider's declaration order.
	Missing []frame.EgressScope
	// Reason says why consent held for this provider id does not cover
	// it (expired, granted for another name or endpoint, journal
	// unreadable); empty when nothing was held at all.
	Reason string
}

// Subject names the provider a decision is about as the host
// reaches it.
type Subject struct {
	// ID is the host's local id for the provider.
	ID string
	// Endpoint is the provider's URL or command line ("" for a provider
	// the host reaches in-process or by an unnamed transport).
	Endpoint string
	// Name is the provider.name the provider announced ("" before its
	// handshake).
	Name string
}

// Store holds consent: legacy per-provider records (replaceable,
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
// Freshness: every read (Evaluate, Admit, Receipts ...) first checks the
// journal with one stat: when another process appended to it (ctxkit
// consent revoke beside a running ctxkit serve), the new lines are read
// before the decision, and a replaced or shortened journal is read again
// whole. A revocation therefore holds from the next request on, without a
// restart. A journal that cannot be read then fails closed: nothing that
// needs consent is permitted until it can be.
//
// The methods take no context.Context: the readers work in memory (plus a
// stat, and a read of what was appended), and the writers (Record, Revoke,
// Grant) append one short line to a local file and fsync it, which cannot
// be abandoned part-way without leaving the journal in doubt. A host that
// must bound them runs them on its own goroutine.
type Store struct {
	mu    sync.Mutex
	path  string
	state consentState
	now   func() time.Time

	// What of the journal state reflects: the file, its size and time
	// when last read, and how many bytes of it were applied.
	seen    os.FileInfo
	offset  int64
	lines   int
	loadErr error

	// A store on a shared log instead of a journal: the log and the
	// position of the last entry applied.
	log    Log
	logPos int64
}

// NewStore returns an empty in-memory store (nothing persisted).
func NewStore() *Store {
	return &Store{state: newConsentState(), now: time.Now}
}

// Open opens (creating if absent) the journal at path and loads
// it. A torn final line left by a crash is dropped; any other malformed line
// is an error.
func Open(path string) (*Store, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("consent: open %s: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("consent: read %s: %w", path, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i+1 != len(data) {
		// An unterminated last line was never acknowledged: drop it.
		if err := f.Truncate(int64(i + 1)); err != nil {
			return nil, fmt.Errorf("consent: repair %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("consent: repair %s: %w", path, err)
		}
	}
	return Watch(path)
}

// Watch returns a store reading the journal at path, which need
// not exist yet: an absent journal holds no consent, and a journal created
// later (by ctxkit consent grant) is read on the next decision. Unlike
// Open it neither creates nor repairs the file, so it suits a
// long-lived reader such as ctxkit serve. A malformed line is an error.
func Watch(path string) (*Store, error) {
	s := NewStore()
	s.path = path
	if err := s.refreshLocked(); err != nil {
		return nil, err
	}
	return s, nil
}

// DefaultPath is the journal ctxkit's CLI uses when none is given:
// $XDG_CONFIG_HOME/ctxkit/consent.ndjson (or the OS equivalent).
func DefaultPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("consent: locate config dir: %w", err)
	}
	return filepath.Join(dir, "ctxkit", "consent.ndjson"), nil
}

// refreshLocked brings the state up to date with the journal: nothing when
// the file is unchanged (one stat), the appended lines when it grew, all of
// it when it was replaced or shortened. An unterminated last line is left
// for later (its writer may be mid-write). On error the store fails closed
// until a later refresh succeeds.
func (s *Store) refreshLocked() error {
	if s.log != nil {
		return s.refreshLogLocked(false)
	}
	if s.path == "" {
		return nil
	}
	fi, err := os.Stat(s.path)
	if errors.Is(err, os.ErrNotExist) {
		s.state, s.seen, s.offset, s.lines, s.loadErr = newConsentState(), nil, 0, 0, nil
		return nil
	}
	if err != nil {
		s.loadErr = fmt.Errorf("consent: stat %s: %w", s.path, err)
		return s.loadErr
	}
	if s.loadErr == nil && s.seen != nil && os.SameFile(fi, s.seen) && fi.Size() == s.seen.Size() && fi.ModTime().Equal(s.seen.ModTime()) && s.offset == fi.Size() {
		return nil
	}
	if s.loadErr != nil || s.seen == nil || !os.SameFile(fi, s.seen) || fi.Size() < s.offset {
		s.state, s.offset, s.lines = newConsentState(), 0, 0
	}
	if err := s.readFromLocked(); err != nil {
		s.loadErr = err
		return err
	}
	s.seen, s.loadErr = fi, nil
	return nil
}

// refreshForWriteLocked is refreshLocked for a writer, which decides what
// to append from the state: a shared log is consulted, not its cache.
func (s *Store) refreshForWriteLocked() error {
	if s.log != nil {
		return s.refreshLogLocked(true)
	}
	return s.refreshLocked()
}

// readFromLocked applies the journal's complete lines after s.offset.
func (s *Store) readFromLocked() error {
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("consent: open %s: %w", s.path, err)
	}
	defer f.Close()
	if _, err := f.Seek(s.offset, io.SeekStart); err != nil {
		return fmt.Errorf("consent: read %s: %w", s.path, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxJournal))
	if err != nil {
		return fmt.Errorf("consent: read %s: %w", s.path, err)
	}
	good := bytes.LastIndexByte(data, '\n') + 1
	sc := bufio.NewScanner(bytes.NewReader(data[:good]))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := s.lines
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("consent: load %s: line %d: %w", s.path, n, err)
		}
		if err := s.state.apply(e); err != nil {
			return fmt.Errorf("consent: load %s: line %d: %w", s.path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("consent: load %s: %w", s.path, err)
	}
	s.offset += int64(good)
	s.lines = n
	return nil
}

// maxJournal bounds one read of the journal (a grant is a few hundred
// bytes; a journal this large is damage, not consent).
const maxJournal = 64 << 20

// append writes e to the journal (fsync'd) and then reads it back with
// anything other processes appended before it; an in-memory store applies
// it directly.
func (s *Store) append(e Entry) error {
	if s.log != nil {
		return s.appendLogLocked(e)
	}
	if s.path == "" {
		return s.state.apply(e)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("consent: encode: %w", err)
	}
	if err := appendSync(s.path, append(line, '\n')); err != nil {
		return err
	}
	return s.refreshLocked()
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

func (s *Store) stamp(t string) string {
	if t != "" {
		return t
	}
	return s.nowStamp()
}

func (s *Store) nowStamp() string { return s.now().UTC().Format("2006-01-02T15:04:05Z") }

// nowInstant is the store clock's reading as a protocol timestamp, to the
// nanosecond, so that expiry compares instants rather than strings.
func (s *Store) nowInstant() frame.Timestamp { return frame.TimestampOf(s.now()) }

// checkExpiry refuses a malformed expiry or one not in the future: consent
// that has already ended is no consent.
func (s *Store) checkExpiry(op, expires string) error {
	if expires == "" {
		return nil
	}
	if !frame.WellFormedTimestamp(expires) {
		return fmt.Errorf("consent: %s: expires_at %q is not a protocol timestamp (YYYY-MM-DDTHH:MM:SSZ)", op, expires)
	}
	if now := s.nowStamp(); expiredAt(expires, s.nowInstant()) {
		return fmt.Errorf("consent: %s: expires_at %s is not in the future (now %s)", op, expires, now)
	}
	return nil
}

// Record stores (replacing any earlier one) a legacy consent record, stamping
// granted_at with the clock when unset. An expiry not in the future is
// refused. It returns once the record is durable.
func (s *Store) Record(r Record) error {
	if r.ProviderID == "" {
		return errors.New("consent: record: empty provider id")
	}
	names := [][2]string{{"provider id", r.ProviderID}, {"provider name", r.ProviderName}, {"endpoint", r.Endpoint}}
	if r.Grantor != nil {
		if err := r.Grantor.check("record"); err != nil {
			return err
		}
		names = append(names, [2]string{"grantor id", r.Grantor.ID})
	}
	return s.write("record", names, r.ExpiresAt, func() Entry {
		r.GrantedAt = s.stamp(r.GrantedAt)
		return Entry{Op: "record", Record: &r}
	})
}

// write checks a grant's names and expiry, then appends the entry made
// (under the lock, after catching up with the journal) and returns once
// it is durable.
func (s *Store) write(op string, names [][2]string, expires string, entry func() Entry) error {
	for _, f := range names {
		if err := printable(op, f[0], f[1]); err != nil {
			return err
		}
	}
	if err := s.checkExpiry(op, expires); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshForWriteLocked(); err != nil {
		return err
	}
	return s.append(entry())
}

// Revoke removes the legacy record for provider and withdraws every receipt
// for it (all scopes when scope is empty). It reports whether anything was
// withdrawn.
func (s *Store) Revoke(provider string, scope frame.EgressScope) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshForWriteLocked(); err != nil {
		return false, err
	}
	changed := false
	if _, ok := s.state.records[provider]; ok && scope == "" {
		if err := s.append(Entry{Op: "revoke", ProviderID: provider}); err != nil {
			return false, err
		}
		changed = true
	}
	var scopes []frame.EgressScope
	for _, r := range s.state.liveReceipts(provider) {
		if scope == "" || r.Scope == scope {
			scopes = append(scopes, r.Scope)
		}
	}
	sort.Slice(scopes, func(i, j int) bool { return scopes[i] < scopes[j] })
	for i, sc := range scopes {
		if i > 0 && scopes[i-1] == sc {
			continue
		}
		if err := s.append(Entry{Op: "revoke_receipt", ProviderID: provider, Scope: sc, At: s.stamp("")}); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

// Grant appends a scope receipt, stamping granted_at when unset. An expiry
// not in the future is refused. It returns once the receipt is durable: an
// acknowledged receipt survives a crash.
func (s *Store) Grant(r Receipt) error {
	if r.ProviderID == "" || r.Scope == "" {
		return errors.New("consent: grant: provider id and scope are required")
	}
	if err := r.Grantor.check("grant"); err != nil {
		return err
	}
	names := [][2]string{{"provider id", r.ProviderID}, {"grantor id", r.Grantor.ID},
		{"provider name", r.ProviderName}, {"provider version", r.ProviderVersion}, {"endpoint", r.Endpoint}}
	return s.write("grant", names, r.ExpiresAt, func() Entry {
		r.GrantedAt = s.stamp(r.GrantedAt)
		return Entry{Op: "receipt", Receipt: &r}
	})
}

// check refuses a grantor that is neither a person nor a policy, or has no
// id.
func (g Grantor) check(op string) error {
	if g.Kind != "human" && g.Kind != "policy" {
		return fmt.Errorf("consent: %s: grantor kind %q is not human or policy", op, g.Kind)
	}
	if strings.TrimSpace(g.ID) == "" {
		return fmt.Errorf("consent: %s: grantor id is required", op)
	}
	return nil
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

// read runs f on the up-to-date state under the lock; a journal that
// cannot be read yields its error and f is not run.
func (s *Store) read(f func(st *consentState, now frame.Timestamp)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refreshLocked(); err != nil {
		return err
	}
	f(&s.state, s.nowInstant())
	return nil
}

// Err reports why the journal cannot be read now (nil when it can); while
// it cannot, nothing that needs consent is permitted.
func (s *Store) Err() error {
	return s.read(func(*consentState, frame.Timestamp) {})
}

// Records returns the legacy records not revoked (expired ones included;
// see Expired), sorted by provider id; none when the journal
// cannot be read (see Err).
func (s *Store) Records() []Record {
	out := []Record{}
	_ = s.read(func(st *consentState, _ frame.Timestamp) {
		for _, r := range st.records {
			out = append(out, r)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ProviderID < out[j].ProviderID })
	return out
}

// Receipts returns the receipts not revoked, in grant order, expired ones
// included (see Expired); none when the journal cannot be read.
func (s *Store) Receipts() []Receipt {
	out := []Receipt{}
	_ = s.read(func(st *consentState, _ frame.Timestamp) { out = st.liveReceipts("") })
	return out
}

// Expired reports whether an expiry (a protocol timestamp, "" for none)
// has passed at now: consent holds while now < expires_at.
func Expired(expiresAt string, now time.Time) bool {
	return expiredAt(expiresAt, frame.TimestampOf(now))
}

// hasRecord reports whether a legacy record in force (not revoked, not
// expired) exists for provider.
func (s *Store) hasRecord(provider string) bool {
	ok := false
	_ = s.read(func(st *consentState, now frame.Timestamp) {
		r, found := st.records[provider]
		ok = found && !expiredAt(r.ExpiresAt, now)
	})
	return ok
}

// hasReceipt reports whether a receipt for (provider, scope) is in force:
// not revoked and not expired.
func (s *Store) hasReceipt(provider string, scope frame.EgressScope) bool {
	_, ok := s.liveReceipt(provider, scope, s.now())
	return ok
}

// liveReceipt returns a receipt for (provider, scope) in force at now
// (not revoked, now < expires_at compared as protocol timestamps).
func (s *Store) liveReceipt(provider string, scope frame.EgressScope, now time.Time) (Receipt, bool) {
	ts := frame.TimestampOf(now)
	var out Receipt
	found := false
	_ = s.read(func(st *consentState, _ frame.Timestamp) {
		for _, r := range st.liveReceipts(provider) {
			if r.Scope == scope && !expiredAt(r.ExpiresAt, ts) {
				out, found = r, true
				return
			}
		}
	})
	return out, found
}

// Evaluate decides whether the host may send the provider a payload,
// as docs/protocol.md §3 (C1, C2, C6) with expiry and binding applied: a provider declaring any
// off-machine scope needs, for every such scope, a receipt in force (not
// revoked, not expired) that covers it (its bound name and endpoint, when
// set, are the subject's); a legacy record never satisfies a scope gate.
// Otherwise a provider declaring egress needs such a legacy record;
// otherwise it is permitted. A journal that cannot be read permits only
// providers that need no consent.
func (s *Store) Evaluate(sub Subject, info frame.ProviderInfo) Decision {
	off := info.DataFlow.OffMachineScopes()
	if len(off) == 0 && !info.DataFlow.Egress {
		return Decision{Permitted: true}
	}
	var d Decision
	err := s.read(func(st *consentState, now frame.Timestamp) { d = st.decide(sub, off, now) })
	if err != nil {
		d = Decision{NeedsConsent: len(off) == 0, Missing: off, Reason: s.unreadable(err)}
	}
	return d
}

// Admit decides whether the host may open a connection to a provider that
// is egress whatever it declares (a non-loopback HTTP provider, C4) before
// knowing what it declares: some consent in force for sub.ID (a legacy
// record or a receipt for any scope) must cover sub.Endpoint. The full
// decision (Evaluate) follows the handshake.
func (s *Store) Admit(sub Subject) Decision {
	var d Decision
	err := s.read(func(st *consentState, now frame.Timestamp) { d = st.admit(sub, now) })
	if err != nil {
		return Decision{NeedsConsent: true, Reason: s.unreadable(err)}
	}
	return d
}

// unreadable is the reason a decision failed closed.
func (s *Store) unreadable(err error) string {
	if s.log != nil {
		return "the shared consent store cannot be read, so nothing that needs consent is sent: " + err.Error()
	}
	return "the consent journal cannot be read: " + err.Error()
}
