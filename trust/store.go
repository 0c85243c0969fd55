package trust

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Store maps a provider id (the host's local id for a provider) to the
// keys the operator trusts for it, by key id. Only the operator fills it:
// nothing in ctxkit adds a key it received on the wire (no trust on first
// use), trust is per provider and not transitive, and the only revocation
// is removal. Rotation means adding a new key id.
//
// Use NewStore or LoadStore; a nil *Store is an empty store for Key, Len
// and List. A Store is not safe for concurrent mutation; concurrent lookups
// are safe.
type Store struct {
	keys map[string]map[string]PublicKey
}

// Entry is one trusted key, as List returns it.
type Entry struct {
	// Provider is the host's local id for the provider the key is trusted
	// for.
	Provider string
	// KeyID is the key's id, as the provider names it in attestations.
	KeyID string
	// Key is the trusted Ed25519 public key.
	Key PublicKey
}

// Fingerprint returns the key's "sha256:<hex>" fingerprint.
func (e Entry) Fingerprint() string { return e.Key.Fingerprint() }

// Errors of Store operations.
var (
	// ErrKeyExists: Add was asked to bind a key id that already names a
	// different key. Revoke first; a rotated key gets a new id.
	ErrKeyExists = errors.New("key id already trusted with a different key")
	// ErrBadName: a provider id or key id is empty, longer than
	// maxNameBytes, not UTF-8, or contains control characters.
	ErrBadName = errors.New("bad provider or key id")
	// ErrCorruptStore: the store file cannot be parsed or fails validation.
	ErrCorruptStore = errors.New("corrupt trust store")
)

// maxNameBytes bounds provider ids and key ids in a Store.
const maxNameBytes = 256

// storeFormat identifies the file format; a file with another value is
// refused rather than misread.
const storeFormat = "ctxkit-trust-store/1"

// NewStore returns an empty store.
func NewStore() *Store { return &Store{keys: map[string]map[string]PublicKey{}} }

func checkName(what, s string) error {
	switch {
	case s == "" || strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: %s is blank", ErrBadName, what)
	case len(s) > maxNameBytes:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrBadName, what, maxNameBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not UTF-8", ErrBadName, what)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: %s contains a control character", ErrBadName, what)
		}
	}
	return nil
}

// Add trusts key for provider under keyID. Adding the same key again is a
// no-op; binding keyID to a different key fails with ErrKeyExists.
func (s *Store) Add(provider, keyID string, key PublicKey) error {
	if err := checkName("provider id", provider); err != nil {
		return fmt.Errorf("trust: add key: %w", err)
	}
	if err := checkName("key id", keyID); err != nil {
		return fmt.Errorf("trust: add key: %w", err)
	}
	if key.isZero() {
		return fmt.Errorf("trust: add key: %w: no key", ErrMalformedKey)
	}
	ks := s.keys[provider]
	if old, ok := ks[keyID]; ok {
		if old != key {
			return fmt.Errorf("trust: add key %s/%s: %w (%s)", provider, keyID, ErrKeyExists, old.Fingerprint())
		}
		return nil
	}
	if ks == nil {
		ks = map[string]PublicKey{}
		s.keys[provider] = ks
	}
	ks[keyID] = key
	return nil
}

// Revoke removes provider's key keyID and reports whether it was there.
func (s *Store) Revoke(provider, keyID string) bool {
	ks := s.keys[provider]
	if _, ok := ks[keyID]; !ok {
		return false
	}
	delete(ks, keyID)
	if len(ks) == 0 {
		delete(s.keys, provider)
	}
	return true
}

// Key returns provider's trusted key keyID.
func (s *Store) Key(provider, keyID string) (PublicKey, bool) {
	if s == nil {
		return PublicKey{}, false
	}
	k, ok := s.keys[provider][keyID]
	return k, ok
}

// size returns the number of trusted keys.
func (s *Store) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, ks := range s.keys {
		n += len(ks)
	}
	return n
}

// List returns every trusted key ordered by provider id, then key id.
func (s *Store) List() []Entry {
	out := make([]Entry, 0, s.Len())
	if s == nil {
		return out
	}
	for p, ks := range s.keys {
		for id, k := range ks {
			out = append(out, Entry{Provider: p, KeyID: id, Key: k})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].KeyID < out[j].KeyID
	})
	return out
}

type storeFile struct {
	Format    string                                 `json:"format"`
	Providers map[string]map[string]storeFileKeyJSON `json:"providers"`
}

type storeFileKeyJSON struct {
	PublicKey string `json:"public_key"`
}

// MarshalJSON encodes the store as
// {"format":"ctxkit-trust-store/1","providers":{P:{K:{"public_key":HEX}}}}
// with providers and key ids in sorted order.
func (s *Store) MarshalJSON() ([]byte, error) {
	f := storeFile{Format: storeFormat, Providers: map[string]map[string]storeFileKeyJSON{}}
	for p, ks := range s.keys {
		m := map[string]storeFileKeyJSON{}
		for id, k := range ks {
			m[id] = storeFileKeyJSON{PublicKey: k.String()}
		}
		f.Providers[p] = m
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalJSON decodes what MarshalJSON writes. Unknown members, a wrong
// format tag, trailing data, bad names and keys that fail the strict checks
// are errors wrapping ErrCorruptStore: a damaged file never reads as an
// empty or partial store.
func (s *Store) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f storeFile
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("%w: %w", ErrCorruptStore, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: data after the store object", ErrCorruptStore)
	}
	if f.Format != storeFormat {
		return fmt.Errorf("%w: format %q, want %q", ErrCorruptStore, truncate(f.Format, 64), storeFormat)
	}
	if f.Providers == nil {
		return fmt.Errorf("%w: no providers member", ErrCorruptStore)
	}
	n := NewStore()
	for p, ks := range f.Providers {
		for id, kj := range ks {
			k, err := ParsePublicKey(kj.PublicKey)
			if err != nil {
				return fmt.Errorf("%w: provider %q key %q: %w", ErrCorruptStore, truncate(p, 64), truncate(id, 64), err)
			}
			if err := n.Add(p, id, k); err != nil {
				return fmt.Errorf("%w: %w", ErrCorruptStore, err)
			}
		}
	}
	*s = *n
	return nil
}

// LoadStore reads the store file at path. A missing file is an empty store
// (the operator has trusted nothing yet); a file that exists but cannot be
// parsed — including an empty one — is an error wrapping ErrCorruptStore,
// never an empty store.
func LoadStore(ctx context.Context, path string) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("trust: load store: %w", err)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewStore(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust: load store: %w", err)
	}
	s := NewStore()
	if err := s.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("trust: load store %s: %w", path, err)
	}
	return s, nil
}

// Save writes the store to path atomically: the bytes go to a temporary
// file in the same directory, which is fsynced, closed and renamed over
// path, and then the directory is fsynced so the rename itself is durable.
// A crash at any point leaves either the old file or the new one, never a
// mix. The file mode is 0600. The directory must exist.
func (s *Store) Save(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("trust: save store: %w", err)
	}
	b, err := s.MarshalJSON()
	if err != nil {
		return fmt.Errorf("trust: save store: %w", err)
	}
	if err := writeAtomic(path, b, nil); err != nil {
		return fmt.Errorf("trust: save store: %w", err)
	}
	return nil
}

// writeHooks are fault points for tests of writeAtomic; nil in production.
type writeHooks struct {
	// beforeRename runs after the temporary file is written, synced and
	// closed, just before the rename; an error aborts the write there.
	beforeRename func(tmp string) error
}

// writeAtomic replaces path with data via temp file, fsync, rename and a
// directory fsync. On failure before the rename the temporary file is
// removed and path is untouched.
func writeAtomic(path string, data []byte, hooks *writeHooks) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if hooks != nil && hooks.beforeRename != nil {
		if err = hooks.beforeRename(tmpName); err != nil {
			return err
		}
	}
	if err = os.Rename(tmpName, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so a rename in it survives a power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	if serr != nil {
		return fmt.Errorf("sync directory: %w", serr)
	}
	return cerr
}
