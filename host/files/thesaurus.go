package files

import (
	"bytes"
	_ "embed"
	"strings"
	"sync"
)

// thesaurusText is a general programming thesaurus: groups of words an
// engineer uses interchangeably (combine/join/merge, directory/folder,
// working directory/getwd). See thesaurus.txt for its origin and format.
//
//go:embed thesaurus.txt
var thesaurusText string

// synonymWeight is the weight of a term a query gains from the thesaurus,
// against 1 for the query's own terms: an answer that uses the engineer's
// own word still ranks above one that uses a synonym of it.
const synonymWeight = 0.3

// synonymMinIDF is the least idf of a synonym the query gains: ln(1 +
// N/df) of 3 is a word in about 1 of 20 chunks.
const synonymMinIDF = 3.0

// thesaurus maps a query's words and phrases to their near-synonyms.
type thesaurus struct {
	// byFirst lists, by a member's first term, the members starting with
	// it (group index and the member's terms).
	byFirst map[string][]thesaurusMember
	groups  [][][]byte // per group, the distinct terms of all its members
}

type thesaurusMember struct {
	group int
	terms [][]byte
}

// defaultThesaurus parses the embedded thesaurus once, through the same
// tokenizer as queries and documents, so its members match the query's
// terms (stemmed, stop words dropped, identifiers kept whole).
var defaultThesaurus = sync.OnceValue(func() *thesaurus { return parseThesaurus(thesaurusText) })

func parseThesaurus(text string) *thesaurus {
	th := &thesaurus{byFirst: make(map[string][]thesaurusMember)}
	tk := newTokenizer()
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		g := len(th.groups)
		var all [][]byte
		n := 0
		for m := range strings.SplitSeq(line, ",") {
			var terms [][]byte
			tk.each([]byte(m), func(t []byte) {
				if !containsTerm(terms, t) {
					terms = append(terms, bytes.Clone(t))
				}
			})
			if len(terms) == 0 {
				continue
			}
			n++
			th.byFirst[string(terms[0])] = append(th.byFirst[string(terms[0])], thesaurusMember{g, terms})
			for _, t := range terms {
				if !containsTerm(all, t) {
					all = append(all, t)
				}
			}
		}
		if n < 2 {
			// A group of one member expands nothing; drop what it added.
			for _, t := range all {
				ms := th.byFirst[string(t)]
				if len(ms) > 0 && ms[len(ms)-1].group == g {
					th.byFirst[string(t)] = ms[:len(ms)-1]
				}
			}
			continue
		}
		th.groups = append(th.groups, all)
	}
	return th
}

// containsTerm reports whether ts holds t.
func containsTerm(ts [][]byte, t []byte) bool {
	for _, have := range ts {
		if bytes.Equal(have, t) {
			return true
		}
	}
	return false
}

// synonym is a term the thesaurus adds to a query, with the index of the
// query term whose group added it.
type synonym struct {
	term   []byte
	source int
}

// expand returns the terms the thesaurus adds to a query whose terms, in
// order, are seq: for every member of a group found in seq (a phrase's
// terms consecutive), the group's terms not already in the query, each
// once. source is the position in distinct of the member's first term.
func (th *thesaurus) expand(seq [][]byte, distinct [][]byte) []synonym {
	if th == nil {
		return nil
	}
	var out []synonym
	seen := map[string]bool{}
	for _, t := range distinct {
		seen[string(t)] = true
	}
	fired := map[int]bool{}
	for i, t := range seq {
		for _, m := range th.byFirst[string(t)] {
			if fired[m.group] || !hasRun(seq[i:], m.terms) {
				continue
			}
			fired[m.group] = true
			src := 0
			for k, d := range distinct {
				if bytes.Equal(d, t) {
					src = k
					break
				}
			}
			for _, s := range th.groups[m.group] {
				if !seen[string(s)] {
					seen[string(s)] = true
					out = append(out, synonym{s, src})
				}
			}
		}
	}
	return out
}

// hasRun reports whether seq starts with terms.
func hasRun(seq, terms [][]byte) bool {
	if len(terms) > len(seq) {
		return false
	}
	for k, t := range terms {
		if !bytes.Equal(seq[k], t) {
			return false
		}
	}
	return true
}
