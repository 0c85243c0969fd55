package frame

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/fixtures"
)

// FuzzValidate decodes arbitrary bytes as a frame and validates it. Nothing
// may panic; a decode failure is a JSON or *MissingMemberError; every
// violation names a rule, a field and a detail; validation is deterministic;
// the frame's encoding is stable under decode and re-encode; and provenance
// links, the frame's timestamps and relation display names keep which
// members are present, empty ones included. Seeds:
// testdata/fuzz/FuzzValidate (the fixture frames) plus the embedded fixtures.
func FuzzValidate(f *testing.F) {
	f.Add(fixtures.File(fixtures.CompactFrame))
	f.Add(fixtures.File(fixtures.ReferenceFrame))
	f.Add([]byte(`{"id":"a","kind":"doc","title":" ","content":"abc","score":1.5,"token_cost":9,"provenance":[{"type":"file","range":"L0"}],"relations":[{"rel":"r","target_uri":" ","display_name":" "}]}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"provenance":[{"type":"file","uri":""},{"type":"x","uri":"u","range":"","digest":null,"method":"","by":""}]}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"provenance":[{"type":"file","uri":"","uri":"u","range":"L1","range":""}]}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"valid_from":"","valid_to":null,"recorded_at":"","relations":[{"rel":"r","target_uri":"x","display_name":""},{"rel":"r","target_uri":"y","display_name":null}]}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"valid_from":"","valid_from":"2026-01-01T00:00:00Z","valid_to":"x","valid_to":""}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"representation":"reference","content_ref":{"provider_id":"p","uri":"u","expires_at":""}}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","content":"x","content_digest":"","score":0.5,"token_cost":1,"canonical_content_hash":""}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","content":"x","representation":"","content_fidelity":"","minimum_content_fidelity":"","inline_content_requirement":"","score":0.5,"token_cost":1}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","representation":"reference","content_digest":"","canonical_content_hash":"","score":0.5,"token_cost":0,"content_ref":{"provider_id":"p","uri":"u"}}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","score":0.5,"token_cost":0,"representation":"compact","content_ref":{"provider_id":"p","uri":"u","expires_at":"","expires_at":null}}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","content":"","score":0.5,"token_cost":0,"content":null}`))
	f.Add([]byte(`{"id":"a","kind":"doc","title":"t","content":"","representation":"reference","canonical_content_hash":"sha256:` + strings.Repeat("a", 64) + `","content_ref":{"provider_id":"p","uri":"u"},"score":0.5,"token_cost":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fr Frame
		if err := json.Unmarshal(data, &fr); err != nil {
			var me *MissingMemberError
			var se *json.SyntaxError
			var te *json.UnmarshalTypeError
			if !errors.As(err, &me) && !errors.As(err, &se) && !errors.As(err, &te) && !strings.HasPrefix(err.Error(), "json: ") {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		v1 := fr.Validate()
		for _, e := range v1 {
			if e.Rule == "" || e.Field == "" || e.Detail == "" {
				t.Fatalf("incomplete violation %+v", e)
			}
		}
		if v2 := fr.Validate(); v1.Error() != v2.Error() {
			t.Fatal("validation is not deterministic")
		}
		enc1, err := json.Marshal(fr)
		if err != nil {
			t.Fatalf("decoded frame does not encode: %v", err)
		}
		var back Frame
		if err := json.Unmarshal(enc1, &back); err != nil {
			t.Fatalf("own encoding %s does not decode: %v", enc1, err)
		}
		enc2, _ := json.Marshal(back)
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("encoding not stable:\n%s\n%s", enc1, enc2)
		}
		// Provenance links keep every member's presence, empty or not,
		// through the round trip, and the encoding writes exactly the
		// members Has reports.
		sameAfterRoundTrip(t, "provenance", fr.Provenance, back.Provenance)
		for _, p := range fr.Provenance {
			writesWhatItHas(t, p, p.Has, MemberURI, MemberRange, MemberDigest, MemberMethod, MemberBy)
		}
		// The same for the frame's members that remember "" and relation
		// display names; a present timestamp is held to F4 and a present
		// digest to D1 even when it is "".
		var top map[string]json.RawMessage
		if err := json.Unmarshal(enc1, &top); err != nil {
			t.Fatal(err)
		}
		for _, m := range frameMembers {
			if back.Has(m) != fr.Has(m) || *back.field(m) != *fr.field(m) {
				t.Fatalf("member %v changed in the round trip", m)
			}
			if _, ok := top[m.String()]; ok != fr.Has(m) {
				t.Fatalf("frame %s: member %v written %v, Has %v", enc1, m, ok, fr.Has(m))
			}
			if m == memberContent {
				continue // "content": "" is carried content, which no rule refuses in a full frame
			}
			rule := "F4 " // a timestamp; the digests are held to D1, the enumerations to the schema
			switch m {
			case MemberContentDigest, memberCanonicalContentHash:
				rule = "D1 "
			case memberRepresentation, memberContentFidelity, memberMinimumContentFidelity, memberInlineContentRequirement:
				rule = "schema "
			}
			if fr.Has(m) && *fr.field(m) == "" && !strings.Contains(v1.Error(), rule+m.String()+":") {
				t.Fatalf("empty %v not reported: %v", m, v1)
			}
		}
		sameAfterRoundTrip(t, "relations", fr.Relations, back.Relations)
		for i, r := range fr.Relations {
			writesWhatItHas(t, r, r.has, memberDisplayName)
			if r.has(memberDisplayName) && r.DisplayName == "" && !strings.Contains(v1.Error(), "G1 relations["+strconv.Itoa(i)+"].display_name:") {
				t.Fatalf("empty display_name of relation %d not reported: %v", i, v1)
			}
		}
		if back.Validate().Error() != v1.Error() {
			t.Fatalf("re-encoded frame validates differently: %v vs %v", back.Validate(), v1)
		}
	})
}

// writesWhatItHas fails t unless v's JSON encoding holds exactly those of
// members that has reports present.
func writesWhatItHas[M fmt.Stringer](t *testing.T, v any, has func(M) bool, members ...M) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var written map[string]json.RawMessage
	if err := json.Unmarshal(b, &written); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if _, ok := written[m.String()]; ok != has(m) {
			t.Fatalf("%s: member %v written %v, Has %v", b, m, ok, has(m))
		}
	}
}

// FuzzGrammars checks the timestamp, line-range, digest and fingerprint
// parsers against independent statements of their grammars.
func FuzzGrammars(f *testing.F) {
	for _, s := range []string{"2026-07-21T12:34:56Z", "2016-12-31T23:59:60.5Z", "2026-02-30T00:00:00Z", "L1-40", "L0", "L9-3",
		"sha256:" + strings.Repeat("a", 64), "bge-small-en-v1.5/384/l2", "m/0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkTimestamp(s) == nil {
			if !strings.HasSuffix(s, "Z") || len(s) < 20 || s[10] != 'T' {
				t.Fatalf("accepted %q", s)
			}
			if s[17:19] != "60" {
				if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
					t.Fatalf("accepted %q which time.Parse rejects: %v", s, err)
				}
			}
		} else if len(s) >= 20 && s[17:19] != "60" && s[len(s)-1] == 'Z' && !strings.ContainsAny(s, "+-z") {
			// Only reject what a strict RFC 3339 reading also rejects or what
			// the grammar excludes (offsets are already excluded above).
			if tm, err := time.Parse(time.RFC3339Nano, s); err == nil && tm.Format(time.RFC3339Nano) == s {
				t.Fatalf("rejected canonical %q", s)
			}
		}
		if r, err := ParseLineRange(s); err == nil {
			if r.Start < 1 || r.End < r.Start || !strings.HasPrefix(s, "L") || strings.Contains(s, "L0") {
				t.Fatalf("accepted range %q as %+v", s, r)
			}
		}
		if WellFormedDigest(s) && (len(s) != 71 || !strings.HasPrefix(s, "sha256:") || strings.ToLower(s) != s) {
			t.Fatalf("accepted digest %q", s)
		}
		if fp, err := ParseFingerprint(s); err == nil && (fp.Dims < 1 || fp.Model == "" || strings.Count(s, "/") > 2) {
			t.Fatalf("accepted fingerprint %q as %+v", s, fp)
		}
	})
}

// sameAfterRoundTrip fails t unless after holds the values of before, one
// for one, presence marks included.
func sameAfterRoundTrip[T comparable](t *testing.T, what string, before, after []T) {
	t.Helper()
	if len(after) != len(before) {
		t.Fatalf("%s: length %d became %d", what, len(before), len(after))
	}
	for i := range before {
		if after[i] != before[i] {
			t.Fatalf("%s[%d] changed in the round trip: %#v became %#v", what, i, before[i], after[i])
		}
	}
}
