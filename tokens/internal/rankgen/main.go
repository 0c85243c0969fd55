// Command rankgen converts an encoding's ranks into the compact form the
// tokens package embeds (tokens/ranks/<encoding>.ranks.gz):
//
//	go run ./tokens/internal/rankgen -src DIR -out tokens/ranks
//
// DIR is the codec directory of github.com/tiktoken-go/tokenizer v0.10.0
// (`go mod download -json github.com/tiktoken-go/tokenizer@v0.10.0` prints
// it; the Go module proxy serves it), whose *_vocab.go files are Go source
// generated from OpenAI's published .tiktoken rank files. rankgen refuses a
// source file whose SHA-256 is not the one recorded below, so the embedded
// data can always be traced to its source.
//
// Output format, before gzip: the token byte strings in rank order (rank 0
// first), each as a uvarint length and the bytes. Ranks must be 0..n-1
// without gaps; rankgen checks that too.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ctxkit/ctxkit/internal/gosrc"
)

// sources names each encoding's vocabulary file and its SHA-256, and the
// SHA-256 of OpenAI's .tiktoken rank file (base64 token, space, rank, one
// a line) that tiktoken's openai_public.py expects: rankgen rebuilds that
// file from the parsed ranks and checks it, so the data is OpenAI's.
var sources = []struct {
	encoding, file, sha256, tiktokenSHA256 string
}{
	{"cl100k_base", "cl100k_base_vocab.go", "8c816b370c882acf1acdb2053b799d5728ca2603b8fe1c6d64bf1c239a0dc35e", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"},
	{"o200k_base", "o200k_base_vocab.go", "0231de1d1df2f838c2ab450d12ffa6b635aa0aa69d24b4585af55a09bf4fb8c7", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"},
}

func main() {
	src := flag.String("src", "", "codec directory of github.com/tiktoken-go/tokenizer v0.10.0")
	out := flag.String("out", "tokens/ranks", "output directory")
	flag.Parse()
	if *src == "" {
		fmt.Fprintln(os.Stderr, "usage: rankgen -src DIR [-out DIR]")
		os.Exit(2)
	}
	for _, s := range sources {
		if err := convert(filepath.Join(*src, s.file), s.sha256, s.tiktokenSHA256, filepath.Join(*out, s.encoding+".ranks.gz")); err != nil {
			fmt.Fprintf(os.Stderr, "rankgen: %s: %v\n", s.encoding, err)
			os.Exit(1)
		}
	}
}

func convert(path, wantSum, wantTiktoken, outPath string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != wantSum {
		return fmt.Errorf("%s has SHA-256 %s, want %s", path, got, wantSum)
	}
	tokens, err := parseVocab(path, src)
	if err != nil {
		return err
	}
	var tiktoken bytes.Buffer
	for r, t := range tokens {
		fmt.Fprintf(&tiktoken, "%s %d\n", base64.StdEncoding.EncodeToString([]byte(t)), r)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(tiktoken.Bytes())); got != wantTiktoken {
		return fmt.Errorf("rebuilt .tiktoken file has SHA-256 %s, want OpenAI's %s", got, wantTiktoken)
	}
	var raw bytes.Buffer
	for _, t := range tokens {
		raw.Write(binary.AppendUvarint(nil, uint64(len(t))))
		raw.WriteString(t)
	}
	var gz bytes.Buffer
	w, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	// A zero header (no name, no time) keeps the output reproducible.
	if _, err := w.Write(raw.Bytes()); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	outSum := sha256.Sum256(gz.Bytes())
	fmt.Printf("%s: %d tokens, %d bytes raw, %d gzip, sha256 %x\n", outPath, len(tokens), raw.Len(), gz.Len(), outSum)
	return os.WriteFile(outPath, gz.Bytes(), 0o644)
}

// parseVocab reads the composite literal `vocab{"token": rank, ...}` from
// the generated Go file and returns the tokens indexed by rank.
func parseVocab(path string, src []byte) ([]string, error) {
	byRank := map[int]string{}
	err := gosrc.StringKeys(path, src, func(s string, value ast.Expr) error {
		v, ok := value.(*ast.BasicLit)
		if !ok || v.Kind != token.INT {
			return nil
		}
		r, err := strconv.Atoi(v.Value)
		if err != nil {
			return fmt.Errorf("rank %s: %w", v.Value, err)
		}
		if old, dup := byRank[r]; dup {
			return fmt.Errorf("rank %d given to %q and %q", r, old, s)
		}
		byRank[r] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	tokens := make([]string, len(byRank))
	seen := map[string]bool{}
	for r := range tokens {
		t, ok := byRank[r]
		if !ok {
			return nil, fmt.Errorf("ranks are not 0..%d: %d is missing", len(tokens)-1, r)
		}
		if seen[t] {
			return nil, fmt.Errorf("token %q has two ranks", t)
		}
		seen[t] = true
		tokens[r] = t
	}
	return tokens, nil
}
