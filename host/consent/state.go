package consent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
)

// The consent rules as a pure function of the journal's entries: no file,
// no clock, no lock. Store feeds it from the local journal; another
// store (a database shared by replicas) can feed it the same entries in
// the same order and get the same decisions.

// Entry is one change to consent: a line of the local journal, a
// row of a shared store's log. Entries are only ever appended; the state
// is the result of applying them in log order.
type Entry struct {
	// Op is record, revoke, receipt or revoke_receipt.
	Op string `json:"op"`
	// Record is the legacy record a record entry stores.
	Record *Record `json:"record,omitempty"`
	// Receipt is the receipt a receipt entry appends.
	Receipt *Receipt `json:"receipt,omitempty"`
	// ProviderID is the provider a revoke or revoke_receipt withdraws.
	ProviderID string `json:"provider_id,omitempty"`
	// Scope is the scope a revoke_receipt withdraws.
	Scope frame.EgressScope `json:"scope,omitempty"`
	// At is when a revocation was made.
	At string `json:"at,omitempty"`
}

// consentState is the store's content, built by applying journal entries
// in order.
type consentState struct {
	records  map[string]Record
	receipts []Receipt
	revoked  []Entry // revoke_receipt entries, in journal order
	// position of each receipt and revocation in the journal, so a later
	// grant re-enables an earlier revoked scope
	receiptSeq []int
	revokedSeq []int
	seq        int
}

func newConsentState() consentState {
	return consentState{records: make(map[string]Record)}
}

func (st *consentState) apply(e Entry) error {
	st.seq++
	switch e.Op {
	case "record":
		if e.Record == nil || e.Record.ProviderID == "" {
			return errors.New("record entry without provider_id")
		}
		st.records[e.Record.ProviderID] = *e.Record
	case "revoke":
		delete(st.records, e.ProviderID)
	case "receipt":
		if e.Receipt == nil || e.Receipt.ProviderID == "" || e.Receipt.Scope == "" {
			return errors.New("receipt entry without provider_id or scope")
		}
		st.receipts = append(st.receipts, *e.Receipt)
		st.receiptSeq = append(st.receiptSeq, st.seq)
	case "revoke_receipt":
		st.revoked = append(st.revoked, e)
		st.revokedSeq = append(st.revokedSeq, st.seq)
	default:
		return fmt.Errorf("unknown op %q", e.Op)
	}
	return nil
}

// liveReceipts returns the provider's receipts not withdrawn by a later
// revocation (all providers' when provider is empty), expired ones
// included.
func (st *consentState) liveReceipts(provider string) []Receipt {
	out := []Receipt{} // never nil: lists encode as [], not null
	for i, r := range st.receipts {
		if provider != "" && r.ProviderID != provider {
			continue
		}
		if st.revokedAfter(r.ProviderID, r.Scope, st.receiptSeq[i]) {
			continue
		}
		out = append(out, r)
	}
	return out
}

func (st *consentState) revokedAfter(provider string, scope frame.EgressScope, seq int) bool {
	for j, e := range st.revoked {
		if e.ProviderID == provider && e.Scope == scope && st.revokedSeq[j] > seq {
			return true
		}
	}
	return false
}

// binding is what a record or receipt is bound to.
type binding struct{ name, endpoint, expires string }

// mismatch says why b does not cover sub at now ("" when it does). An
// empty sub.Name (before the handshake) is not compared.
func (b binding) mismatch(sub Subject, now frame.Timestamp) string {
	switch {
	case expiredAt(b.expires, now):
		return "it expired at " + b.expires
	case b.endpoint != "" && b.endpoint != sub.Endpoint:
		return fmt.Sprintf("it was granted for endpoint %q and the provider is reached at %q", b.endpoint, sub.Endpoint)
	case b.name != "" && sub.Name != "" && b.name != sub.Name:
		return fmt.Sprintf("it was granted for provider name %q and the provider announces %q", b.name, sub.Name)
	}
	return ""
}

func (st *consentState) decide(sub Subject, off []frame.EgressScope, now frame.Timestamp) Decision {
	var why []string
	if len(off) == 0 {
		r, ok := st.records[sub.ID]
		if !ok {
			return Decision{NeedsConsent: true}
		}
		if m := (binding{r.ProviderName, r.Endpoint, r.ExpiresAt}).mismatch(sub, now); m != "" {
			return Decision{NeedsConsent: true, Reason: "the egress consent recorded for " + strconv.Quote(sub.ID) + " does not cover it: " + m}
		}
		return Decision{Permitted: true}
	}
	live := st.liveReceipts(sub.ID)
	var missing []frame.EgressScope
	for _, sc := range off {
		covered, reason := false, ""
		for _, r := range live {
			if r.Scope != sc {
				continue
			}
			m := (binding{r.ProviderName, r.Endpoint, r.ExpiresAt}).mismatch(sub, now)
			if m == "" {
				covered = true
				break
			}
			reason = m
		}
		if !covered {
			missing = append(missing, sc)
			if reason != "" {
				why = append(why, "the receipt for "+string(sc)+" does not cover it: "+reason)
			}
		}
	}
	return Decision{Permitted: len(missing) == 0, Missing: missing, Reason: strings.Join(why, "; ")}
}

func (st *consentState) admit(sub Subject, now frame.Timestamp) Decision {
	var why []string
	if r, ok := st.records[sub.ID]; ok {
		m := (binding{r.ProviderName, r.Endpoint, r.ExpiresAt}).mismatch(sub, now)
		if m == "" {
			return Decision{Permitted: true}
		}
		why = append(why, "the egress consent does not cover it: "+m)
	}
	for _, r := range st.liveReceipts(sub.ID) {
		m := (binding{r.ProviderName, r.Endpoint, r.ExpiresAt}).mismatch(sub, now)
		if m == "" {
			return Decision{Permitted: true}
		}
		why = append(why, "the receipt for "+string(r.Scope)+" does not cover it: "+m)
	}
	return Decision{NeedsConsent: true, Reason: strings.Join(why, "; ")}
}

// expiredAt reports whether an expiry (a protocol timestamp, "" for none)
// has passed at now, compared as instants to the nanosecond: consent holds
// while now < expires_at. An expiry outside the protocol grammar holds at no
// time, so a damaged journal line cannot grant consent forever.
func expiredAt(expires string, now frame.Timestamp) bool {
	if expires == "" {
		return false
	}
	exp, err := frame.ParseTimestamp(expires)
	return err != nil || now.Compare(exp) >= 0
}
