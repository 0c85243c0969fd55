package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/internal/safetext"
)

const consentUsage = `usage: ctxkit consent [--store PATH] SUBCOMMAND [ARGS]

ctxkit never sends a query to a provider that declares egress until consent
is recorded here.

subcommands:
  grant PROVIDER --endpoint E --provider-name N --grantor NAME [--scope S]
        [--policy] [--expires T] [--provider-version V]
        with --scope: append a receipt for egress scope S (org-tenant,
        third-party-index, third-party-model or ns:name); without: record the
        legacy consent for a provider declaring egress without scopes.
        The grant covers PROVIDER only while it is reached at E (its URL, or
        its command and arguments joined by spaces) and announces the name
        N; a refusal by ctxkit query prints both. --expires T (a protocol
        timestamp, in the future) ends it. --policy marks the grantor as a
        policy rather than a person.
  list [--json]           the consent not revoked, expired entries marked
  revoke PROVIDER [--scope S]
                          withdraw the provider's consent (one scope, or all)

--store PATH   the consent journal (default: %s); an append-only file,
               each change synced to disk before the command returns.
--store URL    postgres://... : the shared store of replicated services
               (docs/deploy.md); each change committed before the command
               returns. file:PATH is the journal at PATH.

examples:
  ctxkit consent grant wiki --endpoint https://wiki.example/cgp --provider-name wiki-search \
      --scope third-party-index --grantor alice --expires 2027-06-30T00:00:00Z
  ctxkit consent list --json
  ctxkit consent revoke wiki --scope third-party-index

exit codes: 0 ok; 1 nothing to revoke; 2 usage error or unreadable journal.
`

func runConsent(ctx context.Context, args []string, s stdio) int {
	usage := func(w io.Writer) { fmt.Fprintf(w, consentUsage, defaultConsentShown()) }
	subc, code, ok := splitSubcommand("consent", args, usage, s)
	if !ok {
		return code
	}
	sub, fs := subc.name, subc.flags
	grantor := fs.String("grantor", "", "")
	scope := fs.String("scope", "", "")
	policy := fs.Bool("policy", false, "")
	expires := fs.String("expires", "", "")
	pname := fs.String("provider-name", "", "")
	endpoint := fs.String("endpoint", "", "")
	pversion := fs.String("provider-version", "", "")
	asJSON := fs.Bool("json", false, "")
	pos, code, ok := parseCommand(fs, subc.args, s, usage)
	if !ok {
		return code
	}
	rest := pos
	bad := func(format string, a ...any) int {
		fmt.Fprintf(s.err, "consent "+sub+": "+format+"\n", a...)
		return exitUsage
	}
	store, path, err := openConsent(subc.store, sub == "grant" || sub == "revoke")
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
		if strings.TrimSpace(*endpoint) == "" {
			return bad("--endpoint is required: consent covers the provider reached at one URL or command")
		}
		*endpoint = normalEndpoint(*endpoint)
		if strings.TrimSpace(*pname) == "" {
			return bad("--provider-name is required: consent covers the provider announcing one name")
		}
		if *expires != "" && !frame.WellFormedTimestamp(*expires) {
			return bad("--expires %q is not a protocol timestamp (YYYY-MM-DDTHH:MM:SSZ)", *expires)
		}
		kind := "human"
		if *policy {
			kind = "policy"
		}
		if *scope == "" {
			rec := consent.Record{ProviderID: rest[0], DataFlow: frame.DataFlow{Egress: true}, GrantedScope: "egress",
				ProviderName: *pname, Endpoint: *endpoint, ExpiresAt: *expires,
				Grantor: &consent.Grantor{Kind: kind, ID: *grantor}}
			if err := store.Record(rec); err != nil {
				return bad("%v", err)
			}
			fmt.Fprintf(s.out, "recorded egress consent for %s at %s (by %s %s) in %s\n", rest[0], safetext.Quote(*endpoint), kind, *grantor, path)
			return exitOK
		}
		sc := frame.EgressScope(*scope)
		if !sc.Valid() {
			return bad("scope %q is neither a base scope nor ns:name", *scope)
		}
		r := consent.Receipt{ProviderID: rest[0], Scope: sc, ProviderName: *pname, ProviderVersion: *pversion,
			Endpoint: *endpoint, Grantor: consent.Grantor{Kind: kind, ID: *grantor}, ExpiresAt: *expires}
		if err := store.Grant(r); err != nil {
			return bad("%v", err)
		}
		fmt.Fprintf(s.out, "granted %s scope %s at %s (by %s %s) in %s\n", rest[0], sc, safetext.Quote(*endpoint), kind, *grantor, path)
		return exitOK
	case "list":
		return listConsent(s, store, path, *asJSON)
	case "revoke":
		if len(rest) != 1 {
			return bad("want exactly one PROVIDER")
		}
		ok, err := store.Revoke(rest[0], frame.EgressScope(*scope))
		if err != nil {
			return bad("%v", err)
		}
		if !ok {
			what := rest[0]
			if *scope != "" {
				what += " scope " + *scope
			}
			fmt.Fprintf(s.err, "consent revoke: nothing in force for %s\n", what)
			return exitFailed
		}
		fmt.Fprintf(s.out, "revoked consent for %s\n", rest[0])
		return exitOK
	}
	fmt.Fprintf(s.err, "consent: unknown subcommand %q\n\n", sub)
	usage(s.err)
	return exitUsage
}

// listConsent prints the consent not revoked; an entry whose expiry has
// passed is shown as expired (it no longer permits anything).
func listConsent(s stdio, store *consent.Store, path string, asJSON bool) int {
	if err := store.Err(); err != nil {
		fmt.Fprintf(s.err, "consent list: %v\n", err)
		return exitUsage
	}
	now := time.Now()
	state := func(expires string) string {
		if consent.Expired(expires, now) {
			return "expired"
		}
		return "in_force"
	}
	records, receipts := store.Records(), store.Receipts()
	if asJSON {
		type record struct {
			consent.Record
			State string `json:"state"`
		}
		type receipt struct {
			consent.Receipt
			State string `json:"state"`
		}
		out := struct {
			Records  []record  `json:"records"`
			Receipts []receipt `json:"receipts"`
		}{[]record{}, []receipt{}}
		for _, r := range records {
			out.Records = append(out.Records, record{r, state(r.ExpiresAt)})
		}
		for _, r := range receipts {
			out.Receipts = append(out.Receipts, receipt{r, state(r.ExpiresAt)})
		}
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
		return exitOK
	}
	if len(records) == 0 && len(receipts) == 0 {
		fmt.Fprintf(s.out, "no consent in force in %s\n", path)
		return exitOK
	}
	expiry := func(expires string) string {
		switch {
		case expires == "":
			return ""
		case consent.Expired(expires, now):
			return " EXPIRED " + expires
		}
		return " expires " + expires
	}
	bound := func(name, endpoint string) string {
		if name == "" && endpoint == "" {
			return " (any name, any endpoint)"
		}
		return " name=" + safetext.Quote(name) + " endpoint=" + safetext.Quote(endpoint)
	}
	for _, r := range records {
		by := ""
		if r.Grantor != nil {
			by = " by " + safetext.Quote(r.Grantor.Kind) + " " + safetext.Quote(r.Grantor.ID)
		}
		fmt.Fprintf(s.out, "%-20s egress          granted %s%s%s%s\n", safetext.Quote(r.ProviderID), r.GrantedAt, by, expiry(r.ExpiresAt), bound(r.ProviderName, r.Endpoint))
	}
	for _, r := range receipts {
		fmt.Fprintf(s.out, "%-20s scope %-18s granted %s by %s %s%s%s\n", safetext.Quote(r.ProviderID), safetext.Quote(string(r.Scope)),
			safetext.Quote(r.GrantedAt), safetext.Quote(r.Grantor.Kind), safetext.Quote(r.Grantor.ID),
			expiry(r.ExpiresAt), bound(r.ProviderName, r.Endpoint))
	}
	return exitOK
}

// normalEndpoint spells an endpoint as the host names the provider it
// reaches: a URL as it re-encodes after parsing, a command with its words
// joined by single spaces (as --provider ID=stdio:CMD ARGS splits them).
func normalEndpoint(e string) string {
	if strings.HasPrefix(e, "https://") || strings.HasPrefix(e, "http://") {
		if u, err := url.Parse(e); err == nil {
			return u.String()
		}
		return e
	}
	return strings.Join(strings.Fields(e), " ")
}
