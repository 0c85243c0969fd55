//go:build !race

package tokens

// slowdown scales CPU-time limits in tests (see race_on_test.go).
const slowdown = 1
