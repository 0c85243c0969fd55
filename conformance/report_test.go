package conformance

import (
	"bytes"
	"strings"
	"testing"
)

func TestReportJSONShape(t *testing.T) {
	r := Report{Target: "stdio: p <a&b>", Checks: []Check{
		{Name: "handshake", Status: Pass, Evidence: "ok"},
		{Name: "budget-honesty", Status: Fail, Evidence: `sent <x> "q"`},
		{Name: "verify-honesty", Status: Skipped, Evidence: "no verify"},
	}}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	want := `{"target":"stdio: p <a&b>","checks":[{"name":"handshake","status":"pass","evidence":"ok"},` +
		`{"name":"budget-honesty","status":"fail","evidence":"sent <x> \"q\""},` +
		`{"name":"verify-honesty","status":"skipped","evidence":"no verify"}]}` + "\n"
	if buf.String() != want {
		t.Fatalf("got  %s\nwant %s", buf.String(), want)
	}
	back, err := ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Target != r.Target || len(back.Checks) != 3 || back.Checks[1] != r.Checks[1] {
		t.Fatalf("round trip: %+v", back)
	}
	if p, f, s := back.Tally(); p != 1 || f != 1 || s != 1 {
		t.Fatalf("tally %d %d %d", p, f, s)
	}
	if back.Passed() {
		t.Fatal("a report with a failing check passed")
	}
	back.Checks[1].Status = Skipped
	if !back.Passed() {
		t.Fatal("a report without failures did not pass")
	}
}

func TestReportEmptyChecksIsArray(t *testing.T) {
	var buf bytes.Buffer
	if err := (&Report{Target: "t"}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != `{"target":"t","checks":[]}`+"\n" {
		t.Fatalf("got %s", got)
	}
}

func TestReadReportRejectsUnknownStatus(t *testing.T) {
	_, err := ReadReport(strings.NewReader(`{"target":"t","checks":[{"name":"x","status":"maybe","evidence":""}]}`))
	if err == nil || !strings.Contains(err.Error(), "maybe") {
		t.Fatalf("err = %v", err)
	}
}

func TestStatusMarshalRejectsOutOfRange(t *testing.T) {
	if _, err := Status(7).MarshalJSON(); err == nil {
		t.Fatal("encoded an invalid status")
	}
}

func FuzzReadReport(f *testing.F) {
	f.Add(`{"target":"t","checks":[{"name":"a","status":"pass","evidence":"e"}]}`)
	f.Add(`{"target":"t","checks":null}`)
	f.Add(`{"checks":[{"status":"skipped"}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		r, err := ReadReport(strings.NewReader(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := ReadReport(&buf)
		if err != nil {
			t.Fatalf("re-read %q: %v", buf.String(), err)
		}
		if again.Target != r.Target || len(again.Checks) != len(r.Checks) {
			t.Fatalf("round trip changed the report")
		}
		for i := range r.Checks {
			if again.Checks[i] != r.Checks[i] {
				t.Fatalf("check %d changed: %+v vs %+v", i, r.Checks[i], again.Checks[i])
			}
		}
	})
}

func FuzzFrameRefJSON(f *testing.F) {
	f.Add(`["p","f"]`)
	f.Add(`["p"]`)
	f.Add(`{"a":1}`)
	f.Fuzz(func(t *testing.T, in string) {
		var r FrameRef
		if err := r.UnmarshalJSON([]byte(in)); err != nil {
			return
		}
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back FrameRef
		if err := back.UnmarshalJSON(b); err != nil || back != r {
			t.Fatalf("round trip %q -> %s -> %+v (%v)", in, b, back, err)
		}
	})
}
