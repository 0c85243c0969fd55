package fence

// entityIndex is entityTexts as a flat open-addressed table, for
// decodeNamed: a text of one named reference per unit (the named-ref shape)
// spent about a third of its time in the Go map's hashing and probing; here
// a lookup is two loads and a multiplication to hash, then one or two
// string comparisons. It is built once from entityTexts, which stays the
// source of truth (a test checks every name against it).
type entityIndex struct {
	slot    [entitySlots]uint16 // 1 + the entry's index in entries; 0: empty
	entries []entityEntry
}

// entityEntry is one name and its text, side by side so that the comparison
// and the result share a cache line.
type entityEntry struct {
	name, text string
}

// entitySlots is the table size, a power of two about four times the number
// of names, so that a miss (the prefix lookups of decodeNamed) mostly ends
// at its first empty slot.
const entitySlots = 1 << 13

var entities = buildEntityIndex()

// buildEntityIndex fills the table by linear probing.
func buildEntityIndex() *entityIndex {
	x := &entityIndex{}
	if len(entityTexts) >= entitySlots/2 {
		panic("fence: entity table too small")
	}
	for name, text := range entityTexts {
		h := entityHash(name)
		for x.slot[h] != 0 {
			h = (h + 1) & (entitySlots - 1)
		}
		x.entries = append(x.entries, entityEntry{name, text})
		x.slot[h] = uint16(len(x.entries))
	}
	return x
}

// entityHash hashes a reference name (at least one byte) from its length
// and its first and last four bytes (or three bytes of a shorter name):
// every name differs from its neighbours in those.
func entityHash(name string) uint32 {
	n := len(name)
	var x uint64
	if n >= 4 {
		x = uint64(load32(name, 0)) | uint64(load32(name, n-4))<<32
	} else {
		x = uint64(name[0]) | uint64(name[n-1])<<8 | uint64(name[n/2])<<16
	}
	return uint32((x ^ uint64(n)) * 0x9E3779B97F4A7C15 >> (64 - 13))
}

// lookup returns the text of the reference name, as entityTexts[name].
func (x *entityIndex) lookup(name string) (string, bool) {
	if len(name) == 0 {
		return "", false
	}
	for h := entityHash(name); ; h = (h + 1) & (entitySlots - 1) {
		v := x.slot[h]
		if v == 0 {
			return "", false
		}
		if e := &x.entries[v-1]; e.name == name {
			return e.text, true
		}
	}
}

// load32 reads s[i:i+4] as a little-endian word (one load once compiled).
func load32(s string, i int) uint32 {
	w := s[i : i+4]
	return uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24
}
