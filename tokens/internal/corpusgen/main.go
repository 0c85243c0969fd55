// Command corpusgen writes the synthetic classes of the token-counting
// corpus (tokens/testdata/corpus) from a fixed seed, so the files are
// reproducible: go run ./tokens/internal/corpusgen tokens/testdata/corpus
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: corpusgen DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	r := rand.New(rand.NewPCG(2026, 11))
	files := map[string][]byte{
		"hex.txt":         hexLines(r),
		"uuid.txt":        uuidLines(r),
		"base64.txt":      base64Lines(r),
		"gitlog.txt":      gitLog(r),
		"lockfile.txt":    lockfile(r),
		"json_pretty.txt": nil,
		"json_min.txt":    nil,
	}
	doc := catalogDoc(r)
	pretty, _ := json.MarshalIndent(doc, "", "  ")
	var min bytes.Buffer
	_ = json.Compact(&min, pretty)
	files["json_pretty.txt"] = append(pretty, '\n')
	files["json_min.txt"] = append(min.Bytes(), '\n')
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "corpusgen:", err)
			os.Exit(1)
		}
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// hexLines: SHA-256-sized hex digests, one per line.
func hexLines(r *rand.Rand) []byte {
	var b bytes.Buffer
	for range 60 {
		b.WriteString(hex.EncodeToString(randBytes(r, 32)))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func uuid(r *rand.Rand) string {
	u := randBytes(r, 16)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func uuidLines(r *rand.Rand) []byte {
	var b bytes.Buffer
	for range 100 {
		b.WriteString(uuid(r))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// base64Lines: random bytes in standard base64, wrapped at 76 columns like
// a MIME body.
func base64Lines(r *rand.Rand) []byte {
	s := base64.StdEncoding.EncodeToString(randBytes(r, 3000))
	var b bytes.Buffer
	for len(s) > 76 {
		b.WriteString(s[:76])
		b.WriteByte('\n')
		s = s[76:]
	}
	b.WriteString(s)
	b.WriteByte('\n')
	return b.Bytes()
}

var (
	authors  = []string{"Ana Souza <ana@example.org>", "Ben Okafor <ben.okafor@example.com>", "Chloé Martin <chloe@example.net>", "Dev Patel <dev@example.org>"}
	subjects = []string{
		"fix off-by-one in the pagination cursor",
		"add retry with jitter to the upload client",
		"docs: explain the cache eviction order",
		"refactor: split the parser into lexer and reader",
		"test: cover empty input and trailing newlines",
		"bump golang.org/x/text to v0.21.0",
		"server: return 422 for invalid frames",
		"ci: run the race detector on every push",
	}
	files = []string{"cmd/app/main.go", "internal/cache/lru.go", "internal/cache/lru_test.go", "README.md", "go.mod", "go.sum", "server/handler.go", "parser/lexer.go"}
)

// gitLog imitates `git log --stat` output.
func gitLog(r *rand.Rand) []byte {
	var b bytes.Buffer
	when := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for range 24 {
		when = when.Add(time.Duration(r.IntN(90000)) * time.Second)
		fmt.Fprintf(&b, "commit %s\n", hex.EncodeToString(randBytes(r, 20)))
		fmt.Fprintf(&b, "Author: %s\n", authors[r.IntN(len(authors))])
		fmt.Fprintf(&b, "Date:   %s\n\n", when.Format("Mon Jan 2 15:04:05 2006 -0700"))
		fmt.Fprintf(&b, "    %s\n\n", subjects[r.IntN(len(subjects))])
		n := 1 + r.IntN(3)
		ins, del := 0, 0
		for range n {
			a, d := r.IntN(120), r.IntN(40)
			ins, del = ins+a, del+d
			fmt.Fprintf(&b, " %-28s | %3d %s%s\n", files[r.IntN(len(files))], a+d,
				strings.Repeat("+", min(a/4, 30)), strings.Repeat("-", min(d/4, 10)))
		}
		fmt.Fprintf(&b, " %d files changed, %d insertions(+), %d deletions(-)\n\n", n, ins, del)
	}
	return b.Bytes()
}

var words = []string{"lodash", "react", "chalk", "debug", "semver", "yargs", "minimatch", "glob", "uuid", "ws", "axios", "express", "commander", "picomatch", "esbuild", "typescript", "tslib", "rimraf", "mkdirp", "inherits"}

// lockfile imitates a package-lock.json v3 "packages" section.
func lockfile(r *rand.Rand) []byte {
	type pkg struct {
		Version      string            `json:"version"`
		Resolved     string            `json:"resolved"`
		Integrity    string            `json:"integrity"`
		Dev          bool              `json:"dev,omitempty"`
		License      string            `json:"license"`
		Dependencies map[string]string `json:"dependencies,omitempty"`
	}
	pkgs := map[string]pkg{}
	for i := range 40 {
		name := words[r.IntN(len(words))]
		if i%3 == 0 {
			name = "@scope" + fmt.Sprint(i%5) + "/" + name
		}
		v := fmt.Sprintf("%d.%d.%d", r.IntN(10), r.IntN(30), r.IntN(20))
		base := name[strings.LastIndex(name, "/")+1:]
		p := pkg{
			Version:   v,
			Resolved:  "https://registry.npmjs.org/" + name + "/-/" + base + "-" + v + ".tgz",
			Integrity: "sha512-" + base64.StdEncoding.EncodeToString(randBytes(r, 64)),
			Dev:       r.IntN(2) == 0,
			License:   []string{"MIT", "ISC", "Apache-2.0", "BSD-3-Clause"}[r.IntN(4)],
		}
		if r.IntN(2) == 0 {
			p.Dependencies = map[string]string{words[r.IntN(len(words))]: "^" + fmt.Sprintf("%d.%d.0", r.IntN(9), r.IntN(20))}
		}
		pkgs["node_modules/"+name] = p
	}
	doc := map[string]any{"name": "demo-app", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": pkgs}
	out, _ := json.MarshalIndent(doc, "", "  ")
	return append(out, '\n')
}

// catalogDoc is a product catalogue of the kind APIs return.
func catalogDoc(r *rand.Rand) any {
	type item struct {
		ID          int      `json:"id"`
		SKU         string   `json:"sku"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Price       float64  `json:"price"`
		Currency    string   `json:"currency"`
		InStock     bool     `json:"in_stock"`
		Tags        []string `json:"tags"`
		Dimensions  struct {
			WidthMM  int `json:"width_mm"`
			HeightMM int `json:"height_mm"`
		} `json:"dimensions"`
	}
	adjectives := []string{"compact", "sturdy", "lightweight", "waterproof", "adjustable", "foldable"}
	nouns := []string{"lamp", "backpack", "kettle", "tripod", "notebook", "bottle", "chair", "speaker"}
	var items []item
	for i := range 30 {
		a, n := adjectives[r.IntN(len(adjectives))], nouns[r.IntN(len(nouns))]
		it := item{
			ID:          1000 + i,
			SKU:         fmt.Sprintf("%s-%04d", strings.ToUpper(n[:3]), r.IntN(10000)),
			Name:        a + " " + n,
			Description: fmt.Sprintf("A %s %s for everyday use, tested for %d cycles.", a, n, 1000*(1+r.IntN(50))),
			Price:       float64(r.IntN(20000)) / 100,
			Currency:    "EUR",
			InStock:     r.IntN(3) != 0,
			Tags:        []string{a, n, []string{"home", "outdoor", "office"}[r.IntN(3)]},
		}
		it.Dimensions.WidthMM, it.Dimensions.HeightMM = 50+r.IntN(500), 50+r.IntN(500)
		items = append(items, it)
	}
	return map[string]any{"page": 1, "per_page": 30, "total": 30, "items": items}
}
