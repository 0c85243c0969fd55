//go:build linux

package files

import (
	"bytes"
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory. On Linux it is a bare descriptor: a
// directory is opened relative to its parent's (openat), listed with
// getdents and its files stated relative to it (fstatat). A query on an
// unchanged tree costs one stat per file; this way the kernel does not
// resolve each file's whole path again, and no file costs an allocation
// beyond its name.
type dirHandle struct{ fd int }

// openRootDir opens the directory at an absolute path.
func openRootDir(abs string) (*dirHandle, error) {
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &dirHandle{fd}, nil
}

// openDir opens the subdirectory name of d (abs is its absolute path),
// refusing a symbolic link.
func (d *dirHandle) openDir(name, abs string) (*dirHandle, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	return &dirHandle{fd}, nil
}

func (d *dirHandle) close() { _ = unix.Close(d.fd) }

// list returns the directory's entries in name order, without "." and
// "..", their paths prefixed by rel, reading them through lb.
func (d *dirHandle) list(lb *listBuf, rel string) ([]dirEntry, error) {
	lb.names, lb.raw = lb.names[:0], lb.raw[:0]
	for {
		n, err := unix.Getdents(d.fd, lb.dents)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		lb.names, lb.raw = appendDirents(lb.names, lb.raw, lb.dents[:n])
	}
	return makeEntries(lb, rel), nil
}

// appendDirents decodes linux_dirent64 records: inode (8 bytes), offset
// (8), record length (2), type (1), then the NUL-terminated name. Names
// go to names back to back.
func appendDirents(names []byte, raw []rawEntry, b []byte) ([]byte, []rawEntry) {
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		kind := direntKind(b[18])
		if s := name; len(s) > 0 && !(s[0] == '.' && (len(s) == 1 || len(s) == 2 && s[1] == '.')) {
			raw = append(raw, rawEntry{off: uint32(len(names)), n: uint32(len(name)), kind: kind})
			names = append(names, name...)
		}
		b = b[reclen:]
	}
	return names, raw
}

// ident returns the directory's device, inode, change and modification
// times.
func (d *dirHandle) ident() (dirIdent, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return dirIdent{}, err
	}
	return dirIdent{dev: st.Dev, ino: st.Ino, ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano()}, nil
}

// cacheableFS reports whether d is on a local file system known to move a
// directory's change time whenever an entry is added, removed or renamed,
// as the listing cache needs. Network and user-space file systems are
// listed every time.
func (d *dirHandle) cacheableFS() bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(d.fd, &st); err != nil {
		return false
	}
	switch uint32(st.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.OVERLAYFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, 0x2fc12fc1 /* ZFS */ :
		return true
	}
	return false
}

// direntKind reads a directory entry's type (DT_REG, ...).
func direntKind(t uint8) entryKind {
	switch t {
	case unix.DT_REG:
		return entryFile
	case unix.DT_DIR:
		return entryDir
	case unix.DT_LNK:
		return entrySymlink
	case unix.DT_UNKNOWN:
		return entryUnknown
	}
	return entryOther
}

// stat returns the kind, size and modification time (Unix nanoseconds) of
// the entry e of d, not following a symbolic link.
func (d *dirHandle) stat(e *dirEntry) (kind entryKind, size, modTime int64, err error) {
	var st unix.Stat_t
	for {
		err = fstatat(d.fd, e.z, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return 0, 0, 0, err
	}
	// A directory entry's type is its file mode's format bits, shifted.
	kind = direntKind(uint8((st.Mode & unix.S_IFMT) >> 12))
	return kind, st.Size, st.Mtim.Nano(), nil
}
