//go:build linux && (amd64 || arm64 || riscv64 || ppc64 || ppc64le || s390x)

package files

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// fstatat states z, a name followed by a NUL byte, relative to the
// directory fd. It is unix.Fstatat without the copy of the name that call
// makes to terminate it: the walk's names are already terminated, and a
// warm query states every file of the tree.
func fstatat(fd int, z string, st *unix.Stat_t, flags int) error {
	if len(z) == 0 || z[len(z)-1] != 0 {
		return unix.EINVAL
	}
	_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(fd), uintptr(unsafe.Pointer(unsafe.StringData(z))), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
