package fence

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/internal/npmcache"
)

// readerScript prints what Node's own Unicode data (its ICU) makes of every
// non-ASCII code point that matters to the scanner: the NFKC form of each
// one NFKC turns into ASCII only, the marks, format characters and
// default-ignorable code points, which a reader may drop, and the format
// characters alone.
const readerScript = `
const folds = [], invisible = [], format = [];
const drop = /[\p{Mn}\p{Me}\p{Cf}\p{Default_Ignorable_Code_Point}]/u, cf = /\p{Cf}/u;
for (let cp = 0x80; cp <= 0x10FFFF; cp++) {
  if (cp >= 0xD800 && cp <= 0xDFFF) continue;
  const c = String.fromCodePoint(cp);
  if (cf.test(c)) format.push(cp);
  if (drop.test(c)) { invisible.push(cp); continue; }
  const n = c.normalize('NFKC');
  if (n !== c && /^[\x20-\x7e]+$/.test(n)) folds.push([cp, n]);
}
console.log(JSON.stringify({unicode: process.versions.unicode, folds, invisible, format}));
`

// The table against a real reader on this machine: every code point that
// Node's NFKC (ICU, often a newer Unicode version than golang.org/x/text's)
// turns into ASCII, the scanner reads as that ASCII (or, for a letter newer
// than the table's decompositions, as any letter), and every mark, format
// character and default-ignorable code point that reader knows, the scanner
// skips, and every format character it knows the table calls one (a
// reference's readings tell Cf-stripping readers by it). A table that lags
// the reader's Unicode version fails here, which is how the marks of
// Unicode 17 were found missing.
func TestTableCoversTheReadersNFKC(t *testing.T) {
	node := npmcache.Node(t, 18)
	out, err := exec.Command(node, "-e", readerScript).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got struct {
		Unicode   string
		Folds     [][2]json.RawMessage
		Invisible []rune
		Format    []rune
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("node's Unicode %s: %d folds to ASCII, %d invisible code points", got.Unicode, len(got.Folds), len(got.Invisible))
	if len(got.Folds) < 1000 || len(got.Invisible) < 4000 {
		t.Fatalf("node reported %d folds and %d invisible code points: not a reader's full data", len(got.Folds), len(got.Invisible))
	}
	bad := 0
	report := func(format string, args ...any) {
		if bad++; bad <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, f := range got.Folds {
		var r rune
		var want string
		if json.Unmarshal(f[0], &r) != nil || json.Unmarshal(f[1], &want) != nil {
			t.Fatalf("bad fold record %s", f)
		}
		if i := strings.IndexByte(want, '?'); i >= 0 {
			want = want[:i+1] // '?' is also the table's "nothing of a token": the fold stops there
		}
		if len(want) > 15 {
			want = want[:15] // the table keeps 15 bytes of a fold
		}
		fold, _ := Fold(r)
		switch {
		case fold == want, strings.TrimSpace(fold) == "" && strings.TrimSpace(want) == "":
		case classOf(r) == rcAnyLetter && len(want) == 1 && isASCIILetter(want[0]):
		default:
			report("U+%04X: node's NFKC (Unicode %s) is %q, the scanner reads %q", r, got.Unicode, want, fold)
		}
	}
	for _, r := range got.Invisible {
		if classOf(r) != rcInvisible {
			report("U+%04X: a mark, format character or ignorable to node (Unicode %s), not invisible to the scanner (class %d)", r, got.Unicode, classOf(r))
		}
	}
	for _, r := range got.Format {
		if !isFormat(r) {
			report("U+%04X: a format character (Cf) to node (Unicode %s), not to the table", r, got.Unicode)
		}
	}
	if len(got.Format) < 150 {
		t.Errorf("node reported %d format characters", len(got.Format))
	}
	if bad > 20 {
		t.Errorf("... %d mismatches in all", bad)
	}
	if bad > 0 {
		t.Log("the reader knows a newer Unicode than the table: regenerate it with go run ./internal/fence/gen")
	}
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
