package compose

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden outputs in testdata/golden")

// archive is a minimal txtar archive: a comment, then "-- name --" files.
type archive struct {
	comment string
	names   []string
	files   map[string]string
}

func parseTxtar(data string) *archive {
	a := &archive{files: map[string]string{}}
	cur := ""
	var b strings.Builder
	flush := func() {
		if cur == "" {
			a.comment = b.String()
		} else {
			a.files[cur] = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		trimmed := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			cur = trimmed[3 : len(trimmed)-3]
			a.names = append(a.names, cur)
			continue
		}
		b.WriteString(line)
	}
	flush()
	return a
}

func (a *archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, n := range a.names {
		b.WriteString("-- " + n + " --\n")
		b.WriteString(a.files[n])
	}
	return b.String()
}

func (a *archive) set(name, content string) {
	if _, ok := a.files[name]; !ok {
		a.names = append(a.names, name)
	}
	a.files[name] = content
}

// header reads "key: value" lines from the archive comment.
func (a *archive) header(key string) string {
	for _, line := range strings.Split(a.comment, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Golden renders: each archive holds offers and the exact prompt, audit and
// determinism-floor rendering they compose to. Run with -update to rewrite
// them, then review the diff by hand.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden archives: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := parseTxtar(string(data))
			var offers []Offer
			for _, line := range strings.Split(strings.TrimSpace(a.files["offers.ndjson"]), "\n") {
				var o Offer
				if err := json.Unmarshal([]byte(line), &o); err != nil {
					t.Fatal(err)
				}
				if vs := o.Frame.Validate(); len(vs) > 0 && a.header("invalid") == "" {
					t.Fatalf("offer %d is not a valid frame: %v", len(offers), vs)
				}
				offers = append(offers, o)
			}
			budget, err := strconv.Atoi(a.header("budget"))
			if err != nil {
				t.Fatalf("budget header: %v", err)
			}
			opts := &Options{}
			if s := a.header("strategy"); s != "" {
				for _, st := range strategies() {
					if st.Name() == s {
						opts.Strategy = st
					}
				}
			}
			if p := a.header("packer"); p != "" {
				opts.Packer, _ = ParsePacker(p)
			}
			res := ForPrompt(offers, budget, opts)
			checkResult(t, offers, budget, res)
			var audit bytes.Buffer
			if err := res.Audit.WriteText(&audit); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{"prompt": res.Prompt, "audit": audit.String(), "context": Context(offers)}
			if *update {
				for _, n := range []string{"prompt", "audit", "context"} {
					a.set(n, got[n])
				}
				if err := os.WriteFile(path, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for _, n := range []string{"prompt", "audit", "context"} {
				want, ok := a.files[n]
				if !ok {
					t.Fatalf("archive lacks %q (run with -update)", n)
				}
				if got[n] != want {
					t.Errorf("%s differs:\n--- got ---\n%s\n--- want ---\n%s", n, got[n], want)
				}
			}
		})
	}
}
