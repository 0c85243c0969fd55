//go:build !race

package compose

// raceSlowdown scales wall-clock limits when the race detector is on.
const raceSlowdown = 1

// linearTestBytes is the largest input of the linear-time test.
const linearTestBytes = 2 << 20
