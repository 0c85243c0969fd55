package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
)

func TestReadOffersNDJSON(t *testing.T) {
	in := `{"provider":"alpha","frame":` + frameJSON + `}

{"frame":` + frameJSON + `,"provider":"beta","note":"ignored"}
`
	offers, lines, err := ReadOffers(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(offers) != 2 || offers[0].Provider != "alpha" || lines[0] != 1 || offers[1].Provider != "beta" || lines[1] != 3 {
		t.Fatalf("offers %+v at %v", offers, lines)
	}
	if id := offers[1].ID(); id != (frame.ID{Provider: "beta", Frame: "a"}) {
		t.Fatalf("identity %v", id)
	}
	b, err := offers[0].MarshalJSON()
	if err != nil || string(b) != `{"provider":"alpha","frame":`+frameJSON+`}` {
		t.Fatalf("encoded %s %v", b, err)
	}
}

func TestReadOffersArray(t *testing.T) {
	in := "[\n" + `{"provider":"a","frame":` + frameJSON + "},\n" + `{"provider":"b","frame":` + frameJSON + "}\n]\n"
	offers, lines, err := ReadOffers(strings.NewReader(in), nil)
	if err != nil || len(offers) != 2 || offers[1].Provider != "b" || lines[1] != 2 {
		t.Fatalf("%+v %v", offers, err)
	}
	if offers, _, err := ReadOffers(strings.NewReader(""), nil); err != nil || offers != nil {
		t.Fatalf("empty input: %v %v", offers, err)
	}
}

func TestReadOffersErrorsNameTheLine(t *testing.T) {
	cases := map[string]int{
		`{"provider":"a","frame":` + frameJSON + "}\n" + `{"provider":"b"}`:               2,
		`{"frame":` + frameJSON + `}`:                                                     1,
		`{"provider":"a","frame":` + frameJSON + "}\n{\"provider\":\"a\",\"frame\":\xff}": 2,
		`[{"provider":"a","frame":` + frameJSON + `},{"provider":"b"}]`:                   2,
		"[{\"provider\":\"a\"": 1,
	}
	for in, line := range cases {
		_, _, err := ReadOffers(strings.NewReader(in), nil)
		var de *DecodeError
		if !errors.As(err, &de) || de.Line != line {
			t.Errorf("%q: err = %v", in, err)
		}
	}
	_, _, err := ReadOffers(strings.NewReader("[\n"+strings.Repeat("  \n", 40)+"]"), &DecoderOptions{MaxLineBytes: 50})
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.What != "document" {
		t.Fatalf("over-long array: %v", err)
	}
}

func TestCheckInputShapes(t *testing.T) {
	in := `{"type":"shutdown"}
` + frameJSON + `
{"provider":"p","frame":` + frameJSON + `}
[` + frameJSON + `,{"type":"handshake","protocol_version":"contextgraph/1.0"}]
{"cases":[{"source":` + frameJSON + `,"expected_normalized":` + strings.Replace(frameJSON, `"score":0.5`, `"score":-1`, 1) + `}]}
`
	rep, err := CheckInput(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Items != 7 || len(rep.Errors) != 0 || len(rep.Violations) != 1 {
		t.Fatalf("report %+v", rep)
	}
	f := rep.Violations[0]
	if f.Line != 5 || f.Rule != "F1" || f.Field != "cases[0].expected_normalized.score" {
		t.Fatalf("finding %v", f)
	}
	if rep.Valid() {
		t.Fatal("report with a violation is valid")
	}
}

// An offer's provider id is half of its frame's identity: a blank one is a
// schema violation, not a valid item.
func TestCheckInputBlankOfferProvider(t *testing.T) {
	for _, p := range []string{`""`, `" \t"`} {
		rep, err := CheckInput(strings.NewReader(`{"provider":`+p+`,"frame":`+frameJSON+`}`+"\n"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Violations) != 1 || string(rep.Violations[0].Rule) != "schema" || rep.Violations[0].Field != "provider" {
			t.Fatalf("provider %s: %+v", p, rep.Violations)
		}
	}
}

// TestCheckInputCountsWhatItFound: an input that decodes but holds no frame,
// envelope, offer or query is not valid (Checked false); a bare query and
// the frames inside an upstream fixture's {"missing","blank"} pair count.
func TestCheckInputCountsWhatItFound(t *testing.T) {
	for _, tc := range []struct {
		in    string
		items int
	}{
		{"", 0}, {"[]", 0}, {`{"cases":[]}`, 0}, {`{"vectors":[{"x":1}]}`, 0},
		{`{"goal":"g","max_frames":1,"max_tokens":1}`, 1},
		{`{"missing":{"id":"a","kind":"doc","title":"t","content":"","score":0.5,"token_cost":0,"citation_label":"c"},"blank":{"goal":"g","max_frames":1,"max_tokens":1}}`, 2},
	} {
		rep, err := CheckInput(strings.NewReader(tc.in), nil)
		if err != nil || len(rep.Errors) != 0 {
			t.Fatalf("%s: %v %v", tc.in, err, rep.Errors)
		}
		if rep.Items != tc.items || rep.Checked() != (tc.items > 0) || rep.Valid() != (tc.items > 0) {
			t.Errorf("%s: items %d checked %v valid %v, want %d items", tc.in, rep.Items, rep.Checked(), rep.Valid(), tc.items)
		}
	}
}

// TestCheckInputBoundsNesting: containers are looked into to a fixed depth,
// so deeply nested input (each level is decoded to classify it) is refused
// with one error naming the path rather than worked through quadratically.
func TestCheckInputBoundsNesting(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	rep, err := CheckInput(strings.NewReader(deep), nil)
	if err != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Error(), "nested deeper than") ||
		strings.Count(rep.Errors[0].Error(), ": ") > 4 {
		t.Fatalf("err %v, report errors %v", err, rep.Errors)
	}
	var de *DecodeError
	if !errors.As(rep.Errors[0], &de) {
		t.Fatalf("untyped error %T", rep.Errors[0])
	}
}
