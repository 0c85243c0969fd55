package frame

import (
	"slices"
	"strings"
)

// ProviderInfo is what a provider says about itself in its handshake_ack.
type ProviderInfo struct {
	// Name is the provider's declared name; rule H2 requires it non-empty.
	Name string `json:"name"`
	// Version is the provider's own version string; rule H2 requires it
	// non-empty.
	Version string `json:"version"`
	// DataFlow declares whether the provider reads, writes and sends data
	// off the machine.
	DataFlow DataFlow `json:"data_flow"`
}

// DataFlow declares where a provider's data goes. EgressScopes refines
// Egress; an Egress of true with no scopes is the legacy boolean posture.
type DataFlow struct {
	// Reads is true when the provider reads the user's data; false when
	// absent.
	Reads bool `json:"reads"`
	// Writes is true when the provider writes or modifies the user's data;
	// false when absent.
	Writes bool `json:"writes"`
	// Egress is true when data may leave the machine through the provider.
	// A host never enables it on its own (rule C1); false when absent.
	Egress bool `json:"egress"`
	// EgressScopes lists where data may go; omitted when empty. An
	// off-machine scope requires Egress true (rule C5).
	EgressScopes []EgressScope `json:"egress_scopes,omitempty"`
}

// EgressScope names one place a provider may send data: a base scope, or a
// vendor scope spelled "namespace:name" (rule U3). Unrecognised vendor scopes
// count as off-machine.
type EgressScope string

// The base egress scopes.
const (
	ScopeLocalOnly       EgressScope = "local-only"
	ScopeOrgTenant       EgressScope = "org-tenant"
	ScopeThirdPartyIndex EgressScope = "third-party-index"
	ScopeThirdPartyModel EgressScope = "third-party-model"
)

// baseScopes are the four base scopes.
var baseScopes = [...]EgressScope{ScopeLocalOnly, ScopeOrgTenant, ScopeThirdPartyIndex, ScopeThirdPartyModel}

// isBase reports whether s is one of the four base scopes.
func (s EgressScope) isBase() bool { return slices.Contains(baseScopes[:], s) }

// Valid reports whether s is a base scope or a vendor scope "ns:name" with
// both sides non-empty (split at the first colon).
func (s EgressScope) Valid() bool {
	if s.isBase() {
		return true
	}
	ns, name, ok := strings.Cut(string(s), ":")
	return ok && ns != "" && name != ""
}

// offMachine reports whether data sent under s leaves the machine: every
// scope but local-only, including every vendor scope.
func (s EgressScope) offMachine() bool { return s != ScopeLocalOnly }

// OffMachineScopes returns the declared scopes under which data leaves the
// machine, in declaration order.
func (d *DataFlow) OffMachineScopes() []EgressScope {
	var out []EgressScope
	for _, s := range d.EgressScopes {
		if s.offMachine() {
			out = append(out, s)
		}
	}
	return out
}

// ScopesConsistent reports whether every scope is valid and no off-machine
// scope is declared with Egress false (rule C5).
func (d *DataFlow) ScopesConsistent() bool {
	for _, s := range d.EgressScopes {
		if !s.Valid() || (s.offMachine() && !d.Egress) {
			return false
		}
	}
	return true
}

// Capabilities is what a provider can do, from its handshake_ack. Absent
// members take their zero value. Representations empty means [full].
type Capabilities struct {
	// Query lists the frame kinds the provider serves.
	Query QueryCapabilities `json:"query"`
	// Correlation is true when the provider echoes a query's id on its
	// frames or error reply (rule H4); the host sends ids only then.
	Correlation bool `json:"correlation"`
	// Graph is true for a graph provider, which must favour frames near
	// the query's anchors (rules G3, G4).
	Graph bool `json:"graph"`
	// EmbeddingsFingerprint names the embedding model the provider accepts,
	// as "<model-id>/<dims>[/<norm>]"; empty (omitted) when it takes no
	// query embedding. A host sends an embedding only on an exact match
	// (rule E1).
	EmbeddingsFingerprint string `json:"embeddings_fingerprint,omitempty"`
	// Verify is true when the provider answers verify requests (rule V2).
	Verify bool `json:"verify"`
	// Representations lists the representations the provider can serve;
	// empty (omitted) means full only. A host requests only these (rule P5).
	Representations []Representation `json:"representations,omitempty"`
	// Resolve is true when the provider can resolve content references; it
	// must be true when compact or reference is advertised.
	Resolve bool `json:"resolve"`
}

// QueryCapabilities lists the kinds a provider serves; empty means it makes no
// claim. The kinds are plain strings, not checked against the base kinds.
type QueryCapabilities struct {
	// Kinds are the frame kinds served, as declared; empty makes no claim.
	Kinds []Kind `json:"kinds"`
}

// Supports reports whether the provider advertises representation r (an
// empty list advertises only full).
func (c *Capabilities) Supports(r Representation) bool {
	r = r.Effective()
	if len(c.Representations) == 0 {
		return r == RepresentationFull
	}
	for _, have := range c.Representations {
		if have.Effective() == r {
			return true
		}
	}
	return false
}

// ServesAny reports whether a provider with these capabilities matches a query
// for kinds: true when kinds is empty or any of them is declared.
func (c *Capabilities) ServesAny(kinds []Kind) bool {
	if len(kinds) == 0 {
		return true
	}
	for _, k := range kinds {
		for _, have := range c.Query.Kinds {
			if have == k {
				return true
			}
		}
	}
	return false
}
