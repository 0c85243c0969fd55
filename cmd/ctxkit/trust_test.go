package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTrustCommand(t *testing.T) {
	store := filepath.Join(t.TempDir(), "sub", "trust.json")
	const pub = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"   // RFC 8032 test 1
	const other = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c" // RFC 8032 test 2

	code, out, errs := runCLI(t, "", "trust", "--store", store, "list")
	if code != 0 || !strings.Contains(out, "no trusted keys") {
		t.Fatalf("empty list: %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "trust", "add", "--store", store, "prov", "k1", pub)
	if code != 0 || !strings.Contains(out, "sha256:21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9") {
		t.Fatalf("add: %d %q %q", code, out, errs)
	}
	if code, _, errs = runCLI(t, "", "trust", "--store", store, "add", "prov", "k1", other); code != 1 || !strings.Contains(errs, "already trusted") {
		t.Fatalf("rebind: %d %q", code, errs)
	}
	for _, bad := range []string{strings.ToUpper(pub), pub[:62], "0100000000000000000000000000000000000000000000000000000000000000"} {
		if code, _, errs = runCLI(t, "", "trust", "--store", store, "add", "prov", "k2", bad); code != 2 {
			t.Fatalf("add %s: %d %q", bad, code, errs)
		}
	}
	runCLI(t, "", "trust", "--store", store, "add", "alpha", "k9", other)
	code, out, _ = runCLI(t, "", "trust", "--store", store, "list", "--json")
	var listed []map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 2 || listed[0]["provider"] != "alpha" || listed[1]["public_key"] != pub {
		t.Fatalf("list --json: %d %s", code, out)
	}
	if code, _, _ = runCLI(t, "", "trust", "--store", store, "revoke", "prov", "k1"); code != 0 {
		t.Fatal("revoke")
	}
	if code, _, errs = runCLI(t, "", "trust", "--store", store, "revoke", "prov", "k1"); code != 1 {
		t.Fatalf("revoke twice: %d %q", code, errs)
	}
	code, out, _ = runCLI(t, "", "trust", "--store", store, "list")
	if code != 0 || strings.Contains(out, `"prov"`) || !strings.Contains(out, `"alpha"`) {
		t.Fatalf("list after revoke: %q", out)
	}

	// Flags may follow the subcommand's arguments.
	if code, out, errs = runCLI(t, "", "trust", "add", "beta", "k3", pub, "--store", store); code != 0 || !strings.Contains(out, "trusted beta key k3") {
		t.Fatalf("add with --store last: %d %q %q", code, out, errs)
	}
	if code, out, errs = runCLI(t, "", "trust", "revoke", "beta", "k3", "--store", store); code != 0 {
		t.Fatalf("revoke with --store last: %d %q %q", code, out, errs)
	}

	// A flag of another subcommand is refused rather than ignored.
	for _, args := range [][]string{{"keygen", "--json"}, {"add", "p", "k", pub, "--json"}, {"list", "--key-id", "k"}} {
		if code, out, errs = runCLI(t, "", append([]string{"trust", "--store", store}, args...)...); code != 2 || out != "" || !strings.Contains(errs, "applies to trust") {
			t.Errorf("%v: %d %q %q", args, code, out, errs)
		}
	}

	// A corrupt store is an error (2), never an empty list.
	os.WriteFile(store, []byte(`{"format":"ctxkit-trust-store/1","providers":{`), 0o600)
	if code, out, errs = runCLI(t, "", "trust", "--store", store, "list"); code != 2 || out != "" || !strings.Contains(errs, "corrupt") {
		t.Fatalf("corrupt store: %d %q %q", code, out, errs)
	}
	if strings.Contains(errs, "trust: trust:") {
		t.Errorf("error names its command twice: %q", errs)
	}

	code, out, _ = runCLI(t, "", "trust", "keygen", "--key-id", "k7")
	if code != 0 || !strings.Contains(out, "key_id:      k7") || !strings.Contains(out, "seed:") {
		t.Fatalf("keygen: %d %q", code, out)
	}
	var genPub string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "public_key:" {
			genPub = f[1]
		}
	}
	fresh := filepath.Join(t.TempDir(), "t.json")
	if code, _, errs = runCLI(t, "", "trust", "--store", fresh, "add", "p", "k7", genPub); code != 0 {
		t.Fatalf("generated key not accepted: %q", errs)
	}

	for _, args := range [][]string{{"trust"}, {"trust", "frobnicate"}, {"trust", "add", "p"}, {"trust", "--bogus", "list"}, {"trust", "list", "extra"}} {
		if code, _, _ = runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, out, _ = runCLI(t, "", "trust", "--help"); code != 0 || !strings.Contains(out, "keygen") {
		t.Fatalf("help: %d %q", code, out)
	}
}

func TestTrustDefaultStore(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", cfg)
	want, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "", "trust", "add", "prov", "k1", "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
	if code != 0 {
		t.Fatalf("add: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(want, "ctxkit", "trust.json")); err != nil {
		t.Fatalf("default store not written: %v", err)
	}
	if _, out, _ := runCLI(t, "", "trust", "--help"); !strings.Contains(out, filepath.Join(want, "ctxkit", "trust.json")) {
		t.Fatalf("help does not name the default path: %q", out)
	}
}
