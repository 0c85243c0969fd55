// Command enginebench compares full-text engines for the files provider on
// the judged relevance set over GOROOT (host/files/testdata/relevance):
// SQLite FTS5 (modernc.org/sqlite, porter tokenizer, bm25 with column
// weights) and bleve (English analyzer, field boosts), each over the same
// chunks (files.Split), scored like the in-tree evaluation: recall within
// the budget and MRR, plus index time, query latency and index size. It is
// its own module so that neither engine enters ctxkit's module graph.
//
//	cd internal/enginebench && go run . -engine fts5
//	cd internal/enginebench && go run . -engine bleve
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/build"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/host/files"
)

type span struct {
	File       string
	Start, End int
}

type set struct {
	Roots     []string `json:"roots"`
	Budget    int      `json:"budget"`
	Questions []struct {
		Question string `json:"question"`
		Spans    []span `json:"spans"`
	} `json:"questions"`
}

// doc is one chunk as every engine indexes it.
type doc struct {
	path, heading, body string
	start, end          int
}

// engine indexes docs and ranks them for a question.
type engine interface {
	add(docs []doc) error
	search(q string, limit int) ([]int, error)
	size() int64
}

func main() {
	which := flag.String("engine", "fts5", "fts5 or bleve")
	dir := flag.String("dir", os.TempDir(), "where the engine keeps its index")
	flag.Parse()
	data, err := os.ReadFile("../../host/files/testdata/relevance/goroot.json")
	if err != nil {
		log.Fatal(err)
	}
	var s set
	if err := json.Unmarshal(data, &s); err != nil {
		log.Fatal(err)
	}
	docs := corpus(build.Default.GOROOT, s.Roots)
	var e engine
	switch *which {
	case "fts5":
		e, err = newFTS5(filepath.Join(*dir, "enginebench.sqlite"))
	case "bleve":
		e, err = newBleve(filepath.Join(*dir, "enginebench.bleve"))
	default:
		log.Fatalf("unknown engine %q", *which)
	}
	if err != nil {
		log.Fatal(err)
	}
	t := time.Now()
	if err := e.add(docs); err != nil {
		log.Fatal(err)
	}
	indexTime := time.Since(t)
	var recall, mrr float64
	var lat []time.Duration
	for _, q := range s.Questions {
		t := time.Now()
		ids, err := e.search(q.Question, 64)
		lat = append(lat, time.Since(t))
		if err != nil {
			log.Fatal(err)
		}
		used, n := 0, 0
		for _, id := range ids {
			d := docs[id]
			cost := (len(d.body) + 3) / 4
			if n == 16 || used+cost > s.Budget {
				continue
			}
			used += cost
			n++
			if slices.ContainsFunc(q.Spans, func(j span) bool { return j.File == d.path && d.start <= j.End && j.Start <= d.end }) {
				recall++
				mrr += 1 / float64(n)
				break
			}
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	nq := float64(len(s.Questions))
	fmt.Printf("%s: %d chunks, index %.1fs, %.1f MB on disk, query p50 %.1fms, recall@%d %.1f%% MRR %.3f\n",
		*which, len(docs), indexTime.Seconds(), float64(e.size())/1e6, float64(lat[len(lat)/2].Microseconds())/1000, s.Budget, 100*recall/nq, mrr/nq)
}

// corpus chunks every text file under the roots the way the files
// provider does, skipping hidden and vendor directories.
func corpus(goroot string, roots []string) []doc {
	var docs []doc
	for _, r := range roots {
		root := filepath.Join(goroot, r)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || slices.Contains(files.DefaultSkipDirs, n)) {
					return fs.SkipDir
				}
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil || bytes.IndexByte(data, 0) >= 0 || len(data) > files.DefaultMaxFileSize {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = r + "/" + filepath.ToSlash(rel)
			for _, c := range files.Split(rel, data) {
				docs = append(docs, doc{rel, c.Heading, c.Text, c.StartLine, c.EndLine})
			}
			return nil
		})
	}
	return docs
}

// words are a question's terms for engines that take a term list.
func words(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if len(w) > 1 && !stop[w] {
			out = append(out, w)
		}
	}
	return out
}

var stop = map[string]bool{"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"do": true, "does": true, "for": true, "from": true, "how": true, "i": true, "if": true, "in": true, "is": true, "it": true,
	"of": true, "on": true, "or": true, "that": true, "the": true, "this": true, "to": true, "what": true, "when": true,
	"which": true, "with": true, "can": true, "my": true, "you": true, "get": true}
