// Package defaults fills in the fields an options struct leaves unset, so
// that each package's withDefaults reads as one line per documented
// default instead of three.
package defaults

// IfNotPositive sets *v to d when *v is zero or negative: a limit, count
// or duration for which no value below one means anything.
func IfNotPositive[T ~int | ~int32 | ~int64 | ~float64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// IfZero sets *v to d when *v is its type's zero value: an empty string,
// or a number whose negative values carry a meaning of their own.
func IfZero[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
