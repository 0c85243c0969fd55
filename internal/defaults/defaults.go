// Package defaults fills in the limits an options struct leaves unset (zero
// or negative), so that each package's withDefaults reads as one line per
// documented default instead of three; for a plain zero value, cmp.Or does.
package defaults

// IfNotPositive sets *v to d when *v is zero or negative: a limit, count
// or duration for which no value below one means anything.
func IfNotPositive[T ~int | ~int32 | ~int64 | ~float64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
