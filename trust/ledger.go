package trust

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/internal/cgpjson"
	"github.com/ctxkit/ctxkit/wire"
)

// Ledger records, per frame identity, what the host found when it checked
// the frame's attestation. A frame absent from the ledger is NotChecked.
// The ledger only annotates: a composer given one makes exactly the
// selection and placement it makes without one.
//
// The zero Ledger and a nil *Ledger are empty and readable; Set needs a
// non-nil Ledger. Not safe for concurrent mutation.
type Ledger struct {
	states map[frame.ID]State
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{} }

// Set records state s for identity id, replacing any earlier state.
// Setting NotChecked removes the entry.
func (l *Ledger) Set(id frame.ID, s State) {
	if s.kind == notChecked {
		delete(l.states, id)
		return
	}
	if l.states == nil {
		l.states = map[frame.ID]State{}
	}
	l.states[id] = s
}

// State returns the state recorded for id, or NotChecked.
func (l *Ledger) State(id frame.ID) State {
	if l == nil {
		return State{}
	}
	return l.states[id]
}

// size returns the number of identities with a recorded state.
func (l *Ledger) size() int {
	if l == nil {
		return 0
	}
	return len(l.states)
}

// LedgerEntry is one recorded state.
type LedgerEntry struct {
	// Frame is the identity the state was recorded for.
	Frame frame.ID `json:"frame"`
	// State is the frame's attestation state (JSON member "attestation").
	State State `json:"attestation"`
}

// Entries returns the recorded states in canonical FrameID order.
func (l *Ledger) Entries() []LedgerEntry {
	out := make([]LedgerEntry, 0, l.size())
	if l != nil {
		for id, s := range l.states {
			out = append(out, LedgerEntry{Frame: id, State: s})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Frame.Compare(out[j].Frame) < 0 })
	return out
}

// AddResult checks every frame of one provider's result and
// records each state under the frame's identity with the host's local
// providerID. It returns the states in res.Frames order.
func (l *Ledger) AddResult(store *Store, providerID, providerName string, res *wire.Result) []State {
	states := checkResult(store, providerID, providerName, res)
	for i, s := range states {
		l.Set(res.Frames[i].Identity(providerID), s)
	}
	return states
}

// MarshalJSON encodes the ledger as an array of {"frame": ID,
// "attestation": State} in canonical FrameID order.
func (l *Ledger) MarshalJSON() ([]byte, error) {
	return cgpjson.MarshalNoEscape(l.Entries())
}

// UnmarshalJSON decodes what MarshalJSON writes; an identity listed twice
// is an error.
func (l *Ledger) UnmarshalJSON(b []byte) error {
	var es []LedgerEntry
	if err := json.Unmarshal(b, &es); err != nil {
		return fmt.Errorf("trust: unmarshal ledger: %w", err)
	}
	n := Ledger{}
	for _, e := range es {
		if _, dup := n.states[e.Frame]; dup {
			return fmt.Errorf("trust: unmarshal ledger: frame %q of %q listed twice", truncate(e.Frame.Frame, 64), truncate(e.Frame.Provider, 64))
		}
		n.Set(e.Frame, e.State)
	}
	*l = n
	return nil
}
