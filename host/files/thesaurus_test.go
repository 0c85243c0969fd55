package files

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func expandedTerms(th *thesaurus, query string) []string {
	var seq, distinct [][]byte
	newTokenizer().each([]byte(query), func(t []byte) {
		seq = append(seq, []byte(string(t)))
		if !containsTerm(distinct, t) {
			distinct = append(distinct, []byte(string(t)))
		}
	})
	var out []string
	for _, s := range th.expand(seq, distinct) {
		out = append(out, string(s.term))
	}
	return out
}

// addOthers adds n short documents that share no word with the tests'
// queries.
func addOthers(ix *Index, n int) {
	for i := range n {
		ix.Add(Document{Path: fmt.Sprintf("other%d.md", i), Content: []byte(fmt.Sprintf("# Harbour %d\n\nthe gulls slept %d\n", i, i))})
	}
}

// A synonym common in the index (more than about 1 in 20 chunks) is not
// added: a small index of the word and its synonym alone finds only the word.
func TestCommonSynonymIsNotAdded(t *testing.T) {
	ix := NewIndex()
	ix.Add(Document{Path: "own.md", Content: []byte("# Values\n\ncombine the values alpha\n")})
	ix.Add(Document{Path: "syn.md", Content: []byte("# Values\n\nmerge the values gamma\n")})
	if hits := ix.Search("combine", 0); len(hits) != 1 || hits[0].Path != "own.md" {
		t.Fatalf("got %+v, want own.md alone", hits)
	}
}

// A phrase member fires only when its words are consecutive in the query,
// a word member on the word; the query's own terms are never added again.
func TestThesaurusExpandsWordsAndPhrases(t *testing.T) {
	th := parseThesaurus("# comment\nworking directory, getwd, cwd\ncombine, join, merge\nlonely\n")
	if got := expandedTerms(th, "get the working directory"); !slices.Contains(got, "getwd") || !slices.Contains(got, "cwd") {
		t.Errorf("working directory expands to %q, want getwd and cwd", got)
	}
	if got := expandedTerms(th, "the directory I was working in"); len(got) != 0 {
		t.Errorf("words of a phrase apart expand to %q, want nothing", got)
	}
	got := expandedTerms(th, "combine or merge two lists")
	if slices.Contains(got, "merg") || slices.Contains(got, "combin") || !slices.Contains(got, "join") {
		t.Errorf("combine/merge expands to %q, want join alone", got)
	}
	if len(th.groups) != 2 {
		t.Errorf("parsed %d groups, want 2 (a one-member line expands nothing)", len(th.groups))
	}
}

// The embedded thesaurus parses into many groups, each of two members or
// more, and every line that is not a comment is a group.
func TestEmbeddedThesaurusParses(t *testing.T) {
	th := defaultThesaurus()
	lines := 0
	for l := range strings.Lines(thesaurusText) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines++
		}
	}
	if len(th.groups) < 100 || len(th.groups) != lines {
		t.Errorf("%d groups from %d lines, want one a line and at least 100", len(th.groups), lines)
	}
}

// A chunk that uses a synonym of the query's word is found, below a chunk
// that uses the word itself.
func TestSynonymFoundBelowTheQueryWord(t *testing.T) {
	ix := NewIndex()
	ix.Add(Document{Path: "own.md", Content: []byte("# Values\n\ncombine the values alpha\n")})
	ix.Add(Document{Path: "syn.md", Content: []byte("# Values\n\nmerge the values gamma\n")})
	ix.Add(Document{Path: "long.md", Content: []byte("# Other\n\n" + filler(40))})
	addOthers(ix, 40) // a synonym in more than 1 in 20 chunks is not added
	hits := ix.Search("combine", 0)
	if len(hits) != 2 || hits[0].Path != "own.md" || hits[1].Path != "syn.md" {
		t.Fatalf("got %+v, want own.md then syn.md", hits)
	}
	if !(hits[0].Score > hits[1].Score) {
		t.Errorf("own word %.4f, synonym %.4f: want the own word higher", hits[0].Score, hits[1].Score)
	}
}

// A query term and its synonyms count once: a chunk holding both the word
// and a synonym of it scores as one holding the word alone.
func TestSynonymsDoNotAddUp(t *testing.T) {
	ix := NewIndex()
	ix.Add(Document{Path: "both.md", Content: []byte("# Values\n\ncombine merge values\n")})
	ix.Add(Document{Path: "own.md", Content: []byte("# Values\n\ncombine alpha values\n")})
	ix.Add(Document{Path: "long.md", Content: []byte("# Other\n\n" + filler(40))})
	addOthers(ix, 40)
	wantTwoEqualHits(t, ix.Search("combine values", 0))
}

// A query word naming the file's directory (its package) weighs more in
// the path field than the same word elsewhere in a path.
func TestPackageNameInPathRanksFirst(t *testing.T) {
	ix := NewIndex()
	ix.Add(Document{Path: "misc/tar.md", Content: []byte("# Notes\n\nwrite entries alpha\n")})
	ix.Add(Document{Path: "tar/notes.md", Content: []byte("# Notes\n\nwrite entries gamma\n")})
	hits := ix.Search("tar write entries", 0)
	if len(hits) != 2 || hits[0].Path != "tar/notes.md" || !(hits[0].Score > hits[1].Score) {
		t.Fatalf("got %+v, want tar/notes.md first with a higher score", hits)
	}
}
