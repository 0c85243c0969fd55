package consent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/frame"
)

func TestConsentEvaluate(t *testing.T) {
	s := NewStore()
	local := frame.ProviderInfo{DataFlow: frame.DataFlow{Reads: true, EgressScopes: []frame.EgressScope{frame.ScopeLocalOnly}}}
	legacy := frame.ProviderInfo{DataFlow: frame.DataFlow{Egress: true}}
	scoped := frame.ProviderInfo{DataFlow: frame.DataFlow{Egress: true, EgressScopes: []frame.EgressScope{frame.ScopeOrgTenant, "acme:vault", frame.ScopeLocalOnly}}}
	if d := s.Evaluate(Subject{ID: "l"}, local); !d.Permitted {
		t.Errorf("local-only needs nothing: %+v", d)
	}
	if d := s.Evaluate(Subject{ID: "g"}, legacy); d.Permitted || !d.NeedsConsent {
		t.Errorf("legacy egress: %+v", d)
	}
	d := s.Evaluate(Subject{ID: "s"}, scoped)
	if d.Permitted || len(d.Missing) != 2 || d.Missing[0] != frame.ScopeOrgTenant || d.Missing[1] != "acme:vault" {
		t.Errorf("scoped: %+v", d)
	}
	s.Record(Record{ProviderID: "g", GrantedScope: "egress"})
	s.Record(Record{ProviderID: "s", GrantedScope: "egress"})
	if d := s.Evaluate(Subject{ID: "g"}, legacy); !d.Permitted {
		t.Errorf("legacy after record: %+v", d)
	}
	if d := s.Evaluate(Subject{ID: "s"}, scoped); d.Permitted {
		t.Errorf("a record satisfied a scope gate")
	}
	g := Grantor{Kind: "policy", ID: "ci"}
	s.Grant(Receipt{ProviderID: "s", Scope: frame.ScopeOrgTenant, Grantor: g})
	if d := s.Evaluate(Subject{ID: "s"}, scoped); d.Permitted || len(d.Missing) != 1 {
		t.Errorf("one receipt of two: %+v", d)
	}
	// A receipt for another provider does not count.
	s.Grant(Receipt{ProviderID: "other", Scope: "acme:vault", Grantor: g})
	if d := s.Evaluate(Subject{ID: "s"}, scoped); d.Permitted {
		t.Errorf("other provider's receipt counted")
	}
	if err := s.Grant(Receipt{ProviderID: "s", Scope: "acme:vault", Grantor: g, ExpiresAt: "2000-01-01T00:00:00Z"}); err == nil {
		t.Errorf("a grant that expired in 2000 was accepted")
	}
	s.Grant(Receipt{ProviderID: "s", Scope: "acme:vault", Grantor: g})
	if d := s.Evaluate(Subject{ID: "s"}, scoped); !d.Permitted {
		t.Errorf("all receipts: %+v", d)
	}
	if err := s.Grant(Receipt{ProviderID: "s", Scope: "x:y", Grantor: Grantor{Kind: "robot", ID: "r"}}); err == nil {
		t.Errorf("bad grantor kind accepted")
	}
	// Revocation withdraws; a later grant restores.
	if ok, _ := s.Revoke("s", frame.ScopeOrgTenant); !ok {
		t.Errorf("revoke reported nothing")
	}
	if d := s.Evaluate(Subject{ID: "s"}, scoped); d.Permitted {
		t.Errorf("revoked receipt still counts")
	}
	s.Grant(Receipt{ProviderID: "s", Scope: frame.ScopeOrgTenant, Grantor: g})
	if d := s.Evaluate(Subject{ID: "s"}, scoped); !d.Permitted {
		t.Errorf("re-grant not honoured")
	}
	s.Revoke("g", "")
	if d := s.Evaluate(Subject{ID: "g"}, legacy); d.Permitted {
		t.Errorf("revoked record still counts")
	}
}

func TestConsentPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "consent.ndjson")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	g := Grantor{Kind: "human", ID: "ada"}
	s.Grant(Receipt{ProviderID: "p", Scope: frame.ScopeThirdPartyModel, Grantor: g})
	s.Record(Record{ProviderID: "q", GrantedScope: "egress"})
	s.Grant(Receipt{ProviderID: "p", Scope: frame.ScopeOrgTenant, Grantor: g})
	s.Revoke("p", frame.ScopeOrgTenant)
	// A torn final line (a crash mid-append) is dropped and repaired.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"op":"receipt","receipt":{"provider_id":"p","sco`)
	f.Close()
	s2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if !s2.hasReceipt("p", frame.ScopeThirdPartyModel) || s2.hasReceipt("p", frame.ScopeOrgTenant) || !s2.hasRecord("q") {
		t.Errorf("reloaded state wrong: %+v %+v", s2.Receipts(), s2.Records())
	}
	if err := s2.Grant(Receipt{ProviderID: "z", Scope: "a:b", Grantor: g}); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(path)
	if err != nil || !s3.hasReceipt("z", "a:b") {
		t.Fatalf("append after repair: %v", err)
	}
	// A damaged line in the middle is an error, never an empty store.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, []byte("garbage\n"+string(data)), 0o600)
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("corrupt journal: err = %v", err)
	}
}

// TestConsentSurvivesKill grants in a child process that is killed right
// after Grant returns: the acknowledged receipt must be on disk.
func TestConsentSurvivesKill(t *testing.T) {
	if os.Getenv("CTXKIT_CONSENT_CHILD") != "" {
		s, err := Open(os.Getenv("CTXKIT_CONSENT_CHILD"))
		if err != nil {
			os.Exit(2)
		}
		if err := s.Grant(Receipt{ProviderID: "p", Scope: "a:b", Grantor: Grantor{Kind: "human", ID: "x"}}); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("granted\n")
		time.Sleep(time.Hour)
	}
	path := filepath.Join(t.TempDir(), "c.ndjson")
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^TestConsentSurvivesKill$")
	cmd.Env = append(os.Environ(), "CTXKIT_CONSENT_CHILD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if _, err := out.Read(buf); err != nil || string(buf[:7]) != "granted" {
		t.Fatalf("child did not grant: %q %v", buf, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	s, err := Open(path)
	if err != nil || !s.hasReceipt("p", "a:b") {
		t.Fatalf("acknowledged receipt lost: %v", err)
	}
}

// Names a person reads in the consent listing cannot carry control
// characters (a newline or terminal escape could forge or hide a line of
// it); the lists encode as [] when empty.
func TestConsentRefusesControlCharactersInNames(t *testing.T) {
	s := NewStore()
	if b, err := json.Marshal(s.Receipts()); err != nil || string(b) != "[]" {
		t.Fatalf("empty receipts encode as %s (%v)", b, err)
	}
	ok := Receipt{ProviderID: "ext", Scope: frame.ScopeThirdPartyIndex, Grantor: Grantor{Kind: "human", ID: "alice"}}
	for name, mut := range map[string]func(r *Receipt){
		"provider id newline": func(r *Receipt) { r.ProviderID = "ext\nfake line" },
		"grantor escape":      func(r *Receipt) { r.Grantor.ID = "al\x1b[2Kice" },
		"provider name NUL":   func(r *Receipt) { r.ProviderName = "n\x00" },
		"version bad UTF-8":   func(r *Receipt) { r.ProviderVersion = "1\xff" },
	} {
		r := ok
		mut(&r)
		if err := s.Grant(r); err == nil {
			t.Errorf("%s: granted", name)
		}
	}
	if err := s.Record(Record{ProviderID: "a\tb"}); err == nil {
		t.Error("record with a tab in the provider id accepted")
	}
	if err := s.Grant(ok); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Receipts()); n != 1 {
		t.Fatalf("%d receipts in force, want only the valid one", n)
	}
}

// TestLiveReceiptComparesInstants: a receipt's expiry is compared with the
// clock as an instant, fractional seconds included (as strings,
// "…T12:00:00Z" sorts after "…T12:00:00.9Z" and the receipt would read as
// lapsed half a second early).
func TestLiveReceiptComparesInstants(t *testing.T) {
	s := NewStore()
	s.now = func() time.Time { return time.Date(2026, 7, 1, 11, 0, 0, 0, time.UTC) } // grant before the expiry
	g := Grantor{Kind: "policy", ID: "ci"}
	if err := s.Grant(Receipt{ProviderID: "p", Scope: "acme:vault", Grantor: g, ExpiresAt: "2026-07-01T12:00:00.9Z"}); err != nil {
		t.Fatal(err)
	}
	at := func(ns int) time.Time { return time.Date(2026, 7, 1, 12, 0, 0, ns, time.UTC) }
	if _, ok := s.liveReceipt("p", "acme:vault", at(500e6)); !ok {
		t.Error("receipt lapsed 0.4 s before its expiry")
	}
	if _, ok := s.liveReceipt("p", "acme:vault", at(900e6)); ok {
		t.Error("receipt live at its expiry instant")
	}
	if _, ok := s.liveReceipt("p", "acme:vault", at(950e6)); ok {
		t.Error("receipt live after its expiry")
	}
}

func TestRecordChecksGrantor(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "c.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*Grantor{"robot": {Kind: "robot", ID: "r"}, "no id": {Kind: "human"}, "escape": {Kind: "human", ID: "a\x1b[2Kb"}} {
		if err := s.Record(Record{ProviderID: "p", DataFlow: frame.DataFlow{Egress: true}, Grantor: g}); err == nil {
			t.Errorf("%s: a record with grantor %+v was accepted", name, *g)
		}
	}
	g := &Grantor{Kind: "human", ID: "ada"}
	if err := s.Record(Record{ProviderID: "p", DataFlow: frame.DataFlow{Egress: true}, Grantor: g}); err != nil {
		t.Fatal(err)
	}
	if rs := s.Records(); len(rs) != 1 || rs[0].Grantor == nil || *rs[0].Grantor != *g {
		t.Errorf("records = %+v, want the grantor kept", rs)
	}
}
