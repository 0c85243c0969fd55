package trust

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestStoreAddRevokeList(t *testing.T) {
	a, b, c := testSigner(t, 1), testSigner(t, 2), testSigner(t, 3)
	st := NewStore()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.Add("zeta", "k2", b.PublicKey()))
	must(st.Add("alpha", "k1", a.PublicKey()))
	must(st.Add("alpha", "k0", c.PublicKey()))
	must(st.Add("alpha", "k1", a.PublicKey())) // idempotent
	if err := st.Add("alpha", "k1", b.PublicKey()); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("rebinding a key id: %v", err)
	}
	for _, bad := range [][2]string{{"", "k"}, {"p", ""}, {" ", "k"}, {"p", "k\n"}, {"p", strings.Repeat("x", 300)}, {"p\xff", "k"}} {
		if err := st.Add(bad[0], bad[1], a.PublicKey()); !errors.Is(err, ErrBadName) {
			t.Errorf("Add(%q, %q): %v", bad[0], bad[1], err)
		}
	}
	if err := st.Add("p", "k", PublicKey{}); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("zero key: %v", err)
	}
	got := st.List()
	want := []string{"alpha/k0", "alpha/k1", "zeta/k2"}
	if len(got) != len(want) {
		t.Fatalf("list %v", got)
	}
	for i, e := range got {
		if e.Provider+"/"+e.KeyID != want[i] {
			t.Fatalf("list[%d] = %s/%s, want %s", i, e.Provider, e.KeyID, want[i])
		}
		if !strings.HasPrefix(e.Fingerprint(), "sha256:") || len(e.Fingerprint()) != 71 {
			t.Fatalf("fingerprint %q", e.Fingerprint())
		}
	}
	if k, ok := st.Key("alpha", "k1"); !ok || k != a.PublicKey() {
		t.Fatal("Key lookup")
	}
	if !st.Revoke("alpha", "k1") || st.Revoke("alpha", "k1") || st.Len() != 2 {
		t.Fatal("revoke")
	}
	if _, ok := st.Key("alpha", "k1"); ok {
		t.Fatal("revoked key still trusted")
	}
	// A revoked key's attestations fall back to NoTrustedKey.
	f := sampleFrame("x", true)
	a.KeyID = "k1"
	att := a.SignFrame("alpha", &f, issued)
	if got := Check(st, "alpha", &f, &att); got != NewNoTrustedKey("k1") {
		t.Fatalf("after revoke: %#v", got)
	}
}

func TestNilStoreIsEmpty(t *testing.T) {
	var s *Store
	if _, ok := s.Key("p", "k"); ok || s.Len() != 0 || len(s.List()) != 0 {
		t.Fatal("nil store not empty")
	}
}

func TestStorePersistence(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "trust.json")
	empty, err := LoadStore(ctx, path)
	if err != nil || empty.Len() != 0 {
		t.Fatalf("missing file: %v, %d keys", err, empty.Len())
	}
	st := NewStore()
	if err := st.Add("prov", "k1", testSigner(t, 1).PublicKey()); err != nil {
		t.Fatal(err)
	}
	if err := st.Add("prov", "k2", testSigner(t, 2).PublicKey()); err != nil {
		t.Fatal(err)
	}
	if err := st.Save(ctx, path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	back, err := LoadStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.List()) != 2 || back.List()[1].Key != st.List()[1].Key {
		t.Fatalf("round trip: %v", back.List())
	}
	b1, _ := os.ReadFile(path)
	if err := back.Save(ctx, path); err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(path)
	if string(b1) != string(b2) {
		t.Fatal("saving the same store twice gives different bytes")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".trust.json.tmp-*")); len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

func TestStoreCorruptFileIsAnError(t *testing.T) {
	ctx := context.Background()
	good := `{"format":"ctxkit-trust-store/1","providers":{"p":{"k":{"public_key":"` + testSigner(t, 1).PublicKey().String() + `"}}}}`
	cases := map[string]string{
		"empty file":       ``,
		"truncated":        good[:len(good)/2],
		"not json":         `hello`,
		"wrong format":     strings.Replace(good, "ctxkit-trust-store/1", "ctxkit-trust-store/9", 1),
		"no format":        `{"providers":{}}`,
		"no providers":     `{"format":"ctxkit-trust-store/1"}`,
		"unknown member":   strings.Replace(good, `"providers"`, `"extra":1,"providers"`, 1),
		"trailing data":    good + `{}`,
		"bad key hex":      strings.Replace(good, `"public_key":"`, `"public_key":"zz`, 1),
		"small-order key":  `{"format":"ctxkit-trust-store/1","providers":{"p":{"k":{"public_key":"0100000000000000000000000000000000000000000000000000000000000000"}}}}`,
		"blank key id":     strings.Replace(good, `{"k":`, `{"":`, 1),
		"null":             `null`,
		"array":            `[]`,
		"providers null":   `{"format":"ctxkit-trust-store/1","providers":null}`,
		"uppercase key":    strings.Replace(good, testSigner(t, 1).PublicKey().String(), strings.ToUpper(testSigner(t, 1).PublicKey().String()), 1),
		"key wrong length": strings.Replace(good, `"public_key":"`, `"public_key":"00`, 1),
	}
	dir := t.TempDir()
	for name, body := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := LoadStore(ctx, path)
		if !errors.Is(err, ErrCorruptStore) || st != nil {
			t.Errorf("%s: store %v, err %v", name, st, err)
		}
	}
	path := filepath.Join(dir, "good.json")
	os.WriteFile(path, []byte(good), 0o600)
	if st, err := LoadStore(ctx, path); err != nil || st.Len() != 1 {
		t.Fatalf("good file: %v", err)
	}
	// An unreadable path (a directory) is an error too, not an empty store.
	if st, err := LoadStore(ctx, dir); err == nil || st != nil {
		t.Fatal("directory loaded as a store")
	}
}

// savedOldStore saves a store trusting key "old" of provider p and returns
// its path and bytes.
func savedOldStore(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trust.json")
	old := NewStore()
	old.Add("p", "old", testSigner(t, 1).PublicKey())
	if err := old.Save(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, before
}

// TestStoreInterruptedWrite: a write that fails after the temporary file is
// complete but before the rename leaves the old file byte-identical and no
// temporary file behind.
func TestStoreInterruptedWrite(t *testing.T) {
	path, before := savedOldStore(t)
	next := NewStore()
	next.Add("p", "new", testSigner(t, 2).PublicKey())
	data, _ := next.MarshalJSON()
	crash := errors.New("simulated crash")
	var sawTmp string
	err := writeAtomic(path, data, &writeHooks{beforeRename: func(tmp string) error {
		sawTmp = tmp
		got, _ := os.ReadFile(tmp)
		if string(got) != string(data) {
			t.Errorf("temporary file incomplete at the fault point")
		}
		return crash
	}})
	if !errors.Is(err, crash) {
		t.Fatalf("err %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Fatal("old file changed by an interrupted write")
	}
	if _, err := os.Stat(sawTmp); !os.IsNotExist(err) {
		t.Fatalf("temporary file %s left behind: %v", sawTmp, err)
	}
	st, err := LoadStore(context.Background(), path)
	if err != nil || st.List()[0].KeyID != "old" {
		t.Fatalf("reload: %v", err)
	}
}

// TestStoreCrashBeforeRename kills a real process at the fault point (no
// deferred cleanup runs): the old file is intact and loads.
func TestStoreCrashBeforeRename(t *testing.T) {
	if path := os.Getenv("CTXKIT_TRUST_CRASH_PATH"); path != "" {
		next := NewStore()
		next.Add("p", "new", testSigner(t, 2).PublicKey())
		data, _ := next.MarshalJSON()
		writeAtomic(path, data, &writeHooks{beforeRename: func(string) error { os.Exit(3); return nil }})
		os.Exit(4) // not reached: the hook exits
	}
	path, before := savedOldStore(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreCrashBeforeRename$")
	cmd.Env = append(os.Environ(), "CTXKIT_TRUST_CRASH_PATH="+path)
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child did not crash at the fault point: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Fatal("old file changed by a crashed write")
	}
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".trust.json.tmp-*"))
	if len(tmps) != 1 {
		t.Fatalf("expected the crashed write's temporary file, found %v", tmps)
	}
	st, err := LoadStore(context.Background(), path)
	if err != nil || st.Len() != 1 || st.List()[0].KeyID != "old" {
		t.Fatalf("reload after crash: %v", err)
	}
	// The next save succeeds beside the stale temporary file.
	if err := st.Save(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}

func TestStoreContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(t.TempDir(), "s.json")
	if err := NewStore().Save(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("save: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("cancelled save wrote a file")
	}
	if _, err := LoadStore(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatal("load ignored cancellation")
	}
}
