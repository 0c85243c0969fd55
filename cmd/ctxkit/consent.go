package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host"
)

func consentCommand() command {
	return command{name: "consent", summary: "grant, list and revoke consent for egress providers", run: runConsent}
}

const consentUsage = `usage: ctxkit consent [--store PATH] SUBCOMMAND [ARGS]

ctxkit never sends a query to a provider that declares egress until consent
is recorded here.

subcommands:
  grant PROVIDER --grantor NAME [--scope S] [--policy] [--expires T]
        [--provider-name N] [--provider-version V]
        with --scope: append a receipt for egress scope S (org-tenant,
        third-party-index, third-party-model or ns:name); without: record the
        legacy consent for a provider declaring egress without scopes.
        --policy marks the grantor as a policy rather than a person.
  list [--json]           the consent in force
  revoke PROVIDER [--scope S]
                          withdraw the provider's consent (one scope, or all)

--store PATH   the consent journal (default: %s); an append-only file,
               each change synced to disk before the command returns.

examples:
  ctxkit consent grant wiki --scope third-party-index --grantor alice
  ctxkit consent list --json
  ctxkit consent revoke wiki --scope third-party-index

exit codes: 0 ok; 1 nothing to revoke; 2 usage error or unreadable journal.
`

func runConsent(ctx context.Context, args []string, s stdio) int {
	usage := func(w io.Writer) { fmt.Fprintf(w, consentUsage, defaultConsentShown()) }
	storeArg, sub, rest, code, ok := splitSubcommand("consent", args, usage, s)
	if !ok {
		return code
	}
	storePath := &storeArg
	fs := flag.NewFlagSet("consent "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	grantor := fs.String("grantor", "", "")
	scope := fs.String("scope", "", "")
	policy := fs.Bool("policy", false, "")
	expires := fs.String("expires", "", "")
	pname := fs.String("provider-name", "", "")
	pversion := fs.String("provider-version", "", "")
	asJSON := fs.Bool("json", false, "")
	subStore := fs.String("store", "", "")
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(s.out)
			return exitOK
		}
		fmt.Fprintf(s.err, "consent %s: %v\n", sub, err)
		return exitUsage
	}
	if *subStore != "" {
		*storePath = *subStore
	}
	rest = pos
	bad := func(format string, a ...any) int {
		fmt.Fprintf(s.err, "consent "+sub+": "+format+"\n", a...)
		return exitUsage
	}
	store, path, err := openConsent(*storePath, sub == "grant" || sub == "revoke")
	if err != nil {
		return bad("%v", err)
	}
	switch sub {
	case "grant":
		if len(rest) != 1 {
			return bad("want exactly one PROVIDER")
		}
		if strings.TrimSpace(*grantor) == "" {
			return bad("--grantor NAME is required: consent is given by someone")
		}
		if *expires != "" && !frame.WellFormedTimestamp(*expires) {
			return bad("--expires %q is not a protocol timestamp (YYYY-MM-DDTHH:MM:SSZ)", *expires)
		}
		kind := "human"
		if *policy {
			kind = "policy"
		}
		if *scope == "" {
			rec := host.ConsentRecord{ProviderID: rest[0], DataFlow: frame.DataFlow{Egress: true}, GrantedScope: "egress"}
			if err := store.Record(rec); err != nil {
				return bad("%v", err)
			}
			fmt.Fprintf(s.out, "recorded egress consent for %s in %s\n", rest[0], path)
			return exitOK
		}
		sc := frame.EgressScope(*scope)
		if !sc.Valid() {
			return bad("scope %q is neither a base scope nor ns:name", *scope)
		}
		r := host.ConsentReceipt{ProviderID: rest[0], Scope: sc, ProviderName: *pname, ProviderVersion: *pversion,
			Grantor: host.Grantor{Kind: kind, ID: *grantor}, ExpiresAt: *expires}
		if err := store.Grant(r); err != nil {
			return bad("%v", err)
		}
		fmt.Fprintf(s.out, "granted %s scope %s (by %s %s) in %s\n", rest[0], sc, kind, *grantor, path)
		return exitOK
	case "list":
		if *asJSON {
			enc := json.NewEncoder(s.out)
			enc.SetIndent("", "  ")
			_ = enc.Encode(struct {
				Records  []host.ConsentRecord  `json:"records"`
				Receipts []host.ConsentReceipt `json:"receipts"`
			}{store.Records(), store.Receipts()})
			return exitOK
		}
		if len(store.Records()) == 0 && len(store.Receipts()) == 0 {
			fmt.Fprintf(s.out, "no consent in force in %s\n", path)
			return exitOK
		}
		for _, r := range store.Records() {
			fmt.Fprintf(s.out, "%-20s egress          granted %s\n", r.ProviderID, r.GrantedAt)
		}
		for _, r := range store.Receipts() {
			exp := ""
			if r.ExpiresAt != "" {
				exp = " expires " + r.ExpiresAt
			}
			fmt.Fprintf(s.out, "%-20s scope %-18s granted %s by %s %s%s\n", r.ProviderID, r.Scope, r.GrantedAt, r.Grantor.Kind, r.Grantor.ID, exp)
		}
		return exitOK
	case "revoke":
		if len(rest) != 1 {
			return bad("want exactly one PROVIDER")
		}
		ok, err := store.Revoke(rest[0], frame.EgressScope(*scope))
		if err != nil {
			return bad("%v", err)
		}
		if !ok {
			fmt.Fprintf(s.err, "consent revoke: nothing in force for %s\n", rest[0])
			return exitFailed
		}
		fmt.Fprintf(s.out, "revoked consent for %s\n", rest[0])
		return exitOK
	}
	fmt.Fprintf(s.err, "consent: unknown subcommand %q\n\n", sub)
	usage(s.err)
	return exitUsage
}
