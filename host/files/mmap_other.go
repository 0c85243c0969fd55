//go:build !unix

package files

import "os"

// mapFile reads the file whole where memory mapping is not wired up.
func mapFile(name string) ([]byte, func() error, error) {
	data, err := os.ReadFile(name)
	return data, func() error { return nil }, err
}

// lockFile creates the lock file; without flock, processes are not
// serialised here and rely on the atomic rename alone.
func lockFile(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}
