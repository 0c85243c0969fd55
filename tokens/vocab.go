package tokens

import (
	"bytes"
	"compress/gzip"
	_ "embed" // the rank tables
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"
)

// The rank tables of the two encodings, as written by
// tokens/internal/rankgen from OpenAI's published rank files (the
// generator records their source and checksums).
var (
	//go:embed ranks/o200k_base.ranks.gz
	o200kRanks []byte
	//go:embed ranks/cl100k_base.ranks.gz
	cl100kRanks []byte
)

// noRank marks a byte string that is not a token.
const noRank = math.MaxUint32

// vocab is one encoding's mergeable ranks: token bytes to rank, and rank
// to token bytes. It is built once and never written afterwards.
type vocab struct {
	ranks  map[string]uint32
	tokens []string // by rank
}

// lazyVocab parses an embedded rank table on first use, so a program that
// never counts exactly never pays for it.
type lazyVocab struct {
	data []byte
	once sync.Once
	v    *vocab
	err  error
}

var (
	o200kVocab  = &lazyVocab{data: o200kRanks}
	cl100kVocab = &lazyVocab{data: cl100kRanks}
)

func (l *lazyVocab) get() (*vocab, error) {
	l.once.Do(func() { l.v, l.err = parseRanks(l.data) })
	return l.v, l.err
}

// parseRanks reads rankgen's format: gzip of, for each rank from 0, a
// uvarint length and the token's bytes.
func parseRanks(data []byte) (*vocab, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("tokens: rank table: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("tokens: rank table: %w", err)
	}
	// One string holds every token; the map keys are substrings of it.
	all := string(raw)
	v := &vocab{tokens: make([]string, 0, 200_000)}
	for i := 0; i < len(all); {
		n, k := binary.Uvarint(raw[i:])
		if k <= 0 || n == 0 || uint64(len(all)-i-k) < n {
			return nil, fmt.Errorf("tokens: rank table: bad length at byte %d", i)
		}
		i += k
		v.tokens = append(v.tokens, all[i:i+int(n)])
		i += int(n)
	}
	v.ranks = make(map[string]uint32, len(v.tokens))
	for r, t := range v.tokens {
		v.ranks[t] = uint32(r)
	}
	if len(v.ranks) != len(v.tokens) {
		return nil, fmt.Errorf("tokens: rank table: %d tokens but %d distinct", len(v.tokens), len(v.ranks))
	}
	for b := range 256 {
		if _, ok := v.ranks[string([]byte{byte(b)})]; !ok {
			return nil, fmt.Errorf("tokens: rank table: byte %#x has no token", b)
		}
	}
	return v, nil
}

// rank returns the rank of the byte string b, or noRank.
func (v *vocab) rank(b string) uint32 {
	if r, ok := v.ranks[b]; ok {
		return r
	}
	return noRank
}
