package fence

// The generated tables (tables.go) are strings of fixed-width big-endian
// records, read in place: a rune is 3 bytes, a foldInfo record 4.

// tableRune returns rune record i of table.
func tableRune(table string, i int) rune {
	return rune(table[3*i])<<16 | rune(table[3*i+1])<<8 | rune(table[3*i+2])
}

// foldInfoAt returns foldInfo's record i.
func foldInfoAt(i int) uint32 {
	s := foldInfo[4*i : 4*i+4]
	return uint32(s[0])<<24 | uint32(s[1])<<16 | uint32(s[2])<<8 | uint32(s[3])
}

// inRanges reports whether r lies in one of table's sorted inclusive
// ranges (pairs of rune records).
func inRanges(table string, r rune) bool {
	lo, hi := 0, len(table)/6 // ranges
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch {
		case r < tableRune(table, 2*m):
			hi = m
		case r > tableRune(table, 2*m+1):
			lo = m + 1
		default:
			return true
		}
	}
	return false
}

// isFormat reports whether r is a format character (Cf) of the table's
// Unicode data, newer than the toolchain's.
func isFormat(r rune) bool { return inRanges(formatRanges, r) }
