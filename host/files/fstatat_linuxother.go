//go:build linux && !(amd64 || arm64 || riscv64 || ppc64 || ppc64le || s390x)

package files

import "golang.org/x/sys/unix"

// fstatat states z, a name followed by a NUL byte, relative to the
// directory fd.
func fstatat(fd int, z string, st *unix.Stat_t, flags int) error {
	return unix.Fstatat(fd, z[:len(z)-1], st, flags)
}
