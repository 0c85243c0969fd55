package consent

import (
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
)

var indexFlow = frame.DataFlow{Reads: true, Egress: true, EgressScopes: []frame.EgressScope{frame.ScopeThirdPartyIndex}}

func TestConsentExpiryIsHonoured(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	s := NewStore()
	s.now = func() time.Time { return now }
	g := Grantor{Kind: "human", ID: "ada"}
	if err := s.Grant(Receipt{ProviderID: "p", Scope: frame.ScopeThirdPartyIndex, Grantor: g, ExpiresAt: "2030-01-01T11:59:59Z"}); err == nil {
		t.Fatal("a grant expiring in the past was accepted")
	}
	if err := s.Grant(Receipt{ProviderID: "p", Scope: frame.ScopeThirdPartyIndex, Grantor: g, ExpiresAt: "2030-01-01T12:00:00Z"}); err == nil {
		t.Fatal("a grant expiring now was accepted")
	}
	if err := s.Record(Record{ProviderID: "q", GrantedScope: "egress", ExpiresAt: "2029-01-01T00:00:00Z"}); err == nil {
		t.Fatal("a record expiring in the past was accepted")
	}
	if err := s.Grant(Receipt{ProviderID: "p", Scope: frame.ScopeThirdPartyIndex, Grantor: g, ExpiresAt: "2030-01-01T13:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(Record{ProviderID: "q", GrantedScope: "egress", ExpiresAt: "2030-01-01T13:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	legacy := frame.ProviderInfo{DataFlow: frame.DataFlow{Egress: true}}
	if d := s.Evaluate(Subject{ID: "p"}, frame.ProviderInfo{DataFlow: indexFlow}); !d.Permitted {
		t.Fatalf("live receipt: %+v", d)
	}
	if d := s.Evaluate(Subject{ID: "q"}, legacy); !d.Permitted {
		t.Fatalf("live record: %+v", d)
	}
	now = t0.Add(time.Hour) // exactly expires_at: no longer in force
	if d := s.Evaluate(Subject{ID: "p"}, frame.ProviderInfo{DataFlow: indexFlow}); d.Permitted || !strings.Contains(d.Reason, "expired at 2030-01-01T13:00:00Z") {
		t.Errorf("expired receipt: %+v", d)
	}
	if d := s.Evaluate(Subject{ID: "q"}, legacy); d.Permitted || !strings.Contains(d.Reason, "expired") {
		t.Errorf("expired record: %+v", d)
	}
	if s.hasReceipt("p", frame.ScopeThirdPartyIndex) || s.hasRecord("q") {
		t.Error("hasReceipt/hasRecord count expired consent")
	}
	if !Expired("2030-01-01T13:00:00Z", now) || Expired("", now) || Expired("2030-01-01T13:00:01Z", now) {
		t.Error("Expired disagrees with now < expires_at")
	}
}
