package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxkit/ctxkit/trust"
)

const trustUsage = `usage: ctxkit trust [--store PATH] SUBCOMMAND [ARGS]

Manage the keys this operator trusts to sign CGP frame attestations.
Nothing is trusted unless it is added here: a key a provider announces on
the wire is never trusted by itself.

subcommands:
  add PROVIDER KEYID PUBKEY   trust PUBKEY (64 lowercase hex digits, Ed25519)
                              for PROVIDER under KEYID; prints its fingerprint
  list [--json]               list trusted keys with their sha256 fingerprints
  revoke PROVIDER KEYID       stop trusting a key
  keygen [--key-id ID]        print a new Ed25519 key pair (for a provider to
                              sign with); the seed is secret, keep it so

--store PATH   the store file (default: %s)
               Written atomically (temporary file, fsync, rename).
--store URL    postgres://... : the shared store of replicated services
               (docs/deploy.md); each change committed before the command
               returns. file:PATH is the file at PATH.

examples:
  ctxkit trust keygen --key-id 2026-a
  ctxkit trust --store ./trust.json add docs 2026-a PUBKEY
  ctxkit trust list --json

exit codes: 0 ok; 1 the key id is already bound to another key, or the key to
revoke is not trusted; 2 usage error, malformed key, or unreadable store.
`

// defaultStorePath is <user config dir>/ctxkit/trust.json.
func defaultStorePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "ctxkit", "trust.json"), nil
}

func runTrust(ctx context.Context, args []string, s stdio) int {
	def, derr := defaultStorePath()
	shown := def
	if derr != nil {
		shown = "$XDG_CONFIG_HOME/ctxkit/trust.json (unavailable here: " + derr.Error() + ")"
	}
	usage := func(w io.Writer) { fmt.Fprintf(w, trustUsage, shown) }

	sc, code, ok := splitSubcommand("trust", args, usage, s)
	if !ok {
		return code
	}
	sub, fs := sc.name, sc.flags
	asJSON := fs.Bool("json", false, "")
	keyID := fs.String("key-id", "", "")
	// Flags may come before, between or after the subcommand's arguments.
	pos, code, ok := parseCommand(fs, sc.args, s, usage)
	if !ok {
		return code
	}
	path := sc.store
	if path == "" && sub != "keygen" {
		if derr != nil {
			fmt.Fprintf(s.err, "trust: no --store given and no user config directory: %v\n", derr)
			return exitUsage
		}
		path = def
	}
	want := map[string]int{"add": 3, "list": 0, "revoke": 2, "keygen": 0}
	n, known := want[sub]
	if !known {
		fmt.Fprintf(s.err, "trust: unknown subcommand %q\n\n", sub)
		usage(s.err)
		return exitUsage
	}
	if len(pos) != n {
		fmt.Fprintf(s.err, "trust %s: want %d arguments, got %d\n\n", sub, n, len(pos))
		usage(s.err)
		return exitUsage
	}
	// A flag another subcommand owns is refused, not silently ignored.
	owner := map[string]string{"json": "list", "key-id": "keygen"}
	misplaced := ""
	fs.Visit(func(f *flag.Flag) {
		if o, ok := owner[f.Name]; ok && o != sub && misplaced == "" {
			misplaced = fmt.Sprintf("trust %s: --%s applies to trust %s only", sub, f.Name, o)
		}
	})
	if misplaced != "" {
		fmt.Fprintf(s.err, "%s\n\n", misplaced)
		usage(s.err)
		return exitUsage
	}
	if sub == "keygen" {
		return trustKeygen(s, *keyID)
	}
	ks, closeKeys, err := openKeyStore(ctx, path)
	if err != nil {
		fmt.Fprintf(s.err, "trust %s: %v\n", sub, err)
		return exitUsage
	}
	defer closeKeys()
	switch sub {
	case "add":
		return trustAdd(ctx, s, ks, pos[0], pos[1], pos[2])
	case "list":
		return trustList(ctx, s, ks, *asJSON)
	default:
		return trustRevoke(ctx, s, ks, pos[0], pos[1])
	}
}

func trustAdd(ctx context.Context, s stdio, ks trust.KeyStore, provider, keyID, pub string) int {
	key, err := trust.ParsePublicKey(pub)
	if err != nil {
		fmt.Fprintf(s.err, "%v\n", err)
		return exitUsage
	}
	if err := ks.Add(ctx, provider, keyID, key); err != nil {
		fmt.Fprintf(s.err, "%v\n", err) // already "trust: …"
		if errors.Is(err, trust.ErrKeyExists) {
			return exitFailed
		}
		return exitUsage
	}
	fmt.Fprintf(s.out, "trusted %s key %s %s\n", provider, keyID, key.Fingerprint())
	return exitOK
}

type listedKey struct {
	Provider    string `json:"provider"`
	KeyID       string `json:"key_id"`
	PublicKey   string `json:"public_key"`
	Fingerprint string `json:"fingerprint"`
}

func trustList(ctx context.Context, s stdio, ks trust.KeyStore, asJSON bool) int {
	st, err := ks.Load(ctx)
	if err != nil {
		fmt.Fprintf(s.err, "%v\n", err) // already "trust: load store …"
		return exitUsage
	}
	entries := st.List()
	if asJSON {
		out := make([]listedKey, 0, len(entries))
		for _, e := range entries {
			out = append(out, listedKey{e.Provider, e.KeyID, e.Key.String(), e.Fingerprint()})
		}
		enc := json.NewEncoder(s.out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(s.err, "trust list: %v\n", err)
			return exitUsage
		}
		return exitOK
	}
	if len(entries) == 0 {
		fmt.Fprintf(s.out, "no trusted keys in %s\n", ks.Where())
		return exitOK
	}
	for _, e := range entries {
		fmt.Fprintf(s.out, "%q\t%q\t%s\n", e.Provider, e.KeyID, e.Fingerprint())
	}
	return exitOK
}

func trustRevoke(ctx context.Context, s stdio, ks trust.KeyStore, provider, keyID string) int {
	ok, err := ks.Revoke(ctx, provider, keyID)
	if err != nil {
		fmt.Fprintf(s.err, "%v\n", err)
		return exitUsage
	}
	if !ok {
		fmt.Fprintf(s.err, "trust revoke: %s has no trusted key %q\n", provider, keyID)
		return exitFailed
	}
	fmt.Fprintf(s.out, "revoked %s key %s\n", provider, keyID)
	return exitOK
}

func trustKeygen(s stdio, keyID string) int {
	signer, seed, err := trust.GenerateSigner(rand.Reader, keyID, "")
	if err != nil {
		fmt.Fprintf(s.err, "trust keygen: %v\n", err)
		return exitUsage
	}
	pub := signer.PublicKey()
	if keyID != "" {
		fmt.Fprintf(s.out, "key_id:      %s\n", keyID)
	}
	fmt.Fprintf(s.out, "public_key:  %s\nfingerprint: %s\nseed:        %s  (secret: the provider signs with it)\n",
		pub, pub.Fingerprint(), hex.EncodeToString(seed))
	return exitOK
}
