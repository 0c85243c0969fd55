//go:build !linux

package files

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// dirHandle is a directory by its absolute path: listed with os.ReadDir
// and its files stated by path.
type dirHandle struct{ abs string }

func openRootDir(abs string) (*dirHandle, error) { return &dirHandle{abs}, nil }

func (d *dirHandle) openDir(name, abs string) (*dirHandle, error) { return &dirHandle{abs}, nil }

func (d *dirHandle) close() {}

func (d *dirHandle) list(lb *listBuf, rel string) ([]dirEntry, error) {
	entries, err := os.ReadDir(d.abs)
	if err != nil {
		return nil, err
	}
	lb.names, lb.raw = lb.names[:0], lb.raw[:0]
	for _, e := range entries {
		lb.raw = append(lb.raw, rawEntry{off: uint32(len(lb.names)), n: uint32(len(e.Name())), kind: kindOf(e.Type())})
		lb.names = append(lb.names, e.Name()...)
	}
	return makeEntries(lb, rel), nil
}

func (d *dirHandle) stat(e *dirEntry) (kind entryKind, size, modTime int64, err error) {
	info, err := os.Lstat(filepath.Join(d.abs, e.name()))
	if err != nil {
		return 0, 0, 0, err
	}
	return kindOf(info.Mode().Type()), info.Size(), info.ModTime().UnixNano(), nil
}

// ident is not known here: no directory's listing is cached.
func (d *dirHandle) ident() (dirIdent, error) {
	return dirIdent{}, errors.ErrUnsupported
}

func (d *dirHandle) cacheableFS() bool { return false }

func kindOf(m fs.FileMode) entryKind {
	switch {
	case m.IsRegular():
		return entryFile
	case m.IsDir():
		return entryDir
	case m&fs.ModeSymlink != 0:
		return entrySymlink
	}
	return entryOther
}
