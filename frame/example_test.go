package frame_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/ctxkit/ctxkit/frame"
)

func ExampleFrame_Validate() {
	var f frame.Frame
	_ = json.Unmarshal([]byte(`{"id":"f","kind":"doc","title":"Retry","content":"Retry up to 3 times.",
		"score":0.9,"token_cost":1,"citation_label":""}`), &f)
	for _, v := range f.Validate() {
		fmt.Println(v)
	}
	// Output:
	// F3 citation_label: citation_label is missing or empty
	// B3 token_cost: token_cost 1 is not ceil(20 content bytes / 4) = 5
}

func ExampleBudgetTokens() {
	fmt.Println(frame.BudgetTokens("abcd"), frame.BudgetTokens("abcde"), frame.BudgetTokens("日本語"))
	// Output: 1 2 3
}

func ExampleID_Compare() {
	ids := []frame.ID{
		{Provider: "beta", Frame: "a"},
		{Provider: "alpha", Frame: "b", Digest: "sha256:00"},
		{Provider: "alpha", Frame: "b"},
	}
	slices.SortFunc(ids, frame.ID.Compare)
	for _, id := range ids {
		fmt.Println(id)
	}
	// Output:
	// alpha/b
	// alpha/b@sha256:00
	// beta/a
}

func ExampleWellFormedTimestamp() {
	fmt.Println(frame.WellFormedTimestamp("2028-02-29T12:00:00Z"))
	fmt.Println(frame.WellFormedTimestamp("2026-02-29T12:00:00Z"))
	// Output:
	// true
	// false
}

func ExampleProvenance_Has() {
	// A member sent as "" is present-and-empty and is encoded back as "".
	var p frame.Provenance
	_ = json.Unmarshal([]byte(`{"type":"file","uri":""}`), &p)
	fmt.Println(p.Has(frame.MemberURI), p.Has(frame.MemberRange))
	b, _ := json.Marshal(p)
	fmt.Println(string(b))

	// A link built in Go reads "" as absent unless Set marks it present.
	q := frame.Provenance{Type: "file"}
	fmt.Println(q.Has(frame.MemberURI))
	q.Set(frame.MemberURI, "")
	fmt.Println(q.Has(frame.MemberURI), q == p)
	q.Clear(frame.MemberURI)
	b, _ = json.Marshal(q)
	fmt.Println(string(b))
	// Output:
	// true false
	// {"type":"file","uri":""}
	// false
	// true true
	// {"type":"file"}
}

func ExampleFrame_Has() {
	// A timestamp sent as "" is present: Validate holds it to rule F4 and
	// the encoding writes it back.
	var f frame.Frame
	_ = json.Unmarshal([]byte(`{"id":"a","kind":"fact","title":"t","content":"x","score":0.5,"token_cost":1,"valid_from":"","citation_label":"c"}`), &f)
	fmt.Println(f.Has(frame.MemberValidFrom), f.Has(frame.MemberContentDigest))
	fmt.Println(f.Validate())
	b, _ := json.Marshal(f)
	fmt.Println(string(b))

	// A frame built in Go reads "" as absent unless Set marks it present.
	g := frame.Frame{ID: "a", Kind: frame.KindFact, Title: "t", Content: "x", Score: 0.5, TokenCost: 1, CitationLabel: "c"}
	fmt.Println(g.Has(frame.MemberValidFrom), len(g.Validate()))
	g.Set(frame.MemberValidFrom, "")
	fmt.Println(g.Has(frame.MemberValidFrom), g.Validate())
	g.Clear(frame.MemberValidFrom)
	fmt.Println(g.Has(frame.MemberValidFrom), len(g.Validate()))
	// Output:
	// true false
	// F4 valid_from: timestamp "": too short for YYYY-MM-DDTHH:MM:SSZ
	// {"id":"a","kind":"fact","title":"t","content":"x","score":0.5,"token_cost":1,"valid_from":"","citation_label":"c"}
	// false 0
	// true F4 valid_from: timestamp "": too short for YYYY-MM-DDTHH:MM:SSZ
	// false 0
}

func ExampleRelation() {
	// A display_name sent as "" is present and blank (rule G1), and is
	// encoded back as "".
	var r frame.Relation
	_ = json.Unmarshal([]byte(`{"rel":"doc.documents","target_uri":"symbol:///a","display_name":""}`), &r)
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	// Output:
	// {"rel":"doc.documents","target_uri":"symbol:///a","display_name":""}
}

// Timestamps compare as instants: a fraction counts, trailing zeros do not,
// and a leap second sits between 23:59:59 and the next day.
func ExampleCompareTimestamps() {
	for _, p := range [][2]string{
		{"2026-07-01T00:00:00.5Z", "2026-07-01T00:00:00Z"},
		{"2026-07-01T00:00:00.0Z", "2026-07-01T00:00:00Z"},
		{"2016-12-31T23:59:60Z", "2017-01-01T00:00:00Z"},
	} {
		c, err := frame.CompareTimestamps(p[0], p[1])
		fmt.Println(p[0], c, p[1], err)
	}
	_, err := frame.CompareTimestamps("2026-07-01T00:00:00+01:00", "2026-07-01T00:00:00Z")
	fmt.Println(err)
	// Output:
	// 2026-07-01T00:00:00.5Z 1 2026-07-01T00:00:00Z <nil>
	// 2026-07-01T00:00:00.0Z 0 2026-07-01T00:00:00Z <nil>
	// 2016-12-31T23:59:60Z -1 2017-01-01T00:00:00Z <nil>
	// F4: timestamp "2026-07-01T00:00:00+01:00": must end in Z or .digits then Z (UTC only, no offset)
}

// ParseTimestamp reads the grammar once; Time gives the Go time, a leap
// second as the last nanosecond before the next minute.
func ExampleParseTimestamp() {
	ts, err := frame.ParseTimestamp("2016-12-31T23:59:60Z")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ts.Time().Format(time.RFC3339Nano))
	// Output:
	// 2016-12-31T23:59:59.999999999Z
}
