package trust

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// KeyStore is where the operator's trusted keys are kept: the local file
// (FileKeys) or a store shared by several hosts (a database). Add and
// Revoke return once the change is durable; Load returns the keys trusted
// at the time of the call.
type KeyStore interface {
	// Load returns the keys trusted now.
	Load(ctx context.Context) (*Store, error)
	// Add trusts key for provider under keyID, as Store.Add (the same key
	// again is a no-op; another key under keyID fails with ErrKeyExists).
	Add(ctx context.Context, provider, keyID string, key PublicKey) error
	// Revoke stops trusting provider's keyID and reports whether it was
	// trusted.
	Revoke(ctx context.Context, provider, keyID string) (bool, error)
	// Where names the store for messages (a path; never a credential).
	Where() string
}

// FileKeys is the trust store file at Path (see LoadStore and Save): each
// change reads the file, applies the change and replaces the file
// atomically. Changes from two processes at once are not merged (the
// later rename wins); a shared store orders them.
type FileKeys struct {
	// Path is the store file; its directory is created on the first write.
	Path string
}

// Load reads the file (a missing file is an empty store).
func (f FileKeys) Load(ctx context.Context) (*Store, error) { return LoadStore(ctx, f.Path) }

// Add trusts key and saves the file.
func (f FileKeys) Add(ctx context.Context, provider, keyID string, key PublicKey) error {
	st, err := f.Load(ctx)
	if err != nil {
		return err
	}
	if err := st.Add(provider, keyID, key); err != nil {
		return err
	}
	return f.save(ctx, st)
}

// Revoke removes the key and saves the file when it was there.
func (f FileKeys) Revoke(ctx context.Context, provider, keyID string) (bool, error) {
	st, err := f.Load(ctx)
	if err != nil {
		return false, err
	}
	if !st.Revoke(provider, keyID) {
		return false, nil
	}
	return true, f.save(ctx, st)
}

// Where is the file's path.
func (f FileKeys) Where() string { return f.Path }

func (f FileKeys) save(ctx context.Context, st *Store) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return fmt.Errorf("trust: save store: %w", err)
	}
	return st.Save(ctx, f.Path)
}
