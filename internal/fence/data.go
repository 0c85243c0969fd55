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
