//go:build race

package tokens

// slowdown scales CPU-time limits in tests: the race detector makes code
// several times slower.
const slowdown = 10
