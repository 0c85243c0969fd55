package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Several DIRs are one files provider with one share of the budget; each
// path names its root; the audit has an index line per DIR.
func TestQuerySeveralDirsOneProvider(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "retry.md"), []byte("# Retry\n\nFailed requests are retried with exponential backoff.\n"), 0o644)
	os.WriteFile(filepath.Join(b, "retry.md"), []byte("# Retry budget\n\nAt most three retries are spent per request.\n"), 0o644)
	code, out, errs := runCLI(t, "", "query", "--no-index", "--goal", "retry requests", a, b)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if strings.Count(errs, "share=") != 1 || strings.Count(errs, "# index indexed") != 2 {
		t.Errorf("want one provider leg and two index lines:\n%s", errs)
	}
	if !strings.Contains(out, `id="`+filepath.Base(a)+`/retry.md#L1-3"`) || !strings.Contains(out, `id="`+filepath.Base(b)+`/retry.md#L1-3"`) {
		t.Errorf("ids do not name their roots:\n%s", out)
	}
}

// --index keeps the index: the second query finds it fresh; --format json
// reports it; contradicting flags are a usage error.
func TestQueryStoredIndex(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# Quota\n\nThe quota resets at midnight.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.bin"), []byte("quota\x00\x01"), 0o644)
	store := filepath.Join(t.TempDir(), "ix")
	if code, _, errs := runCLI(t, "", "query", "--index", store, "--goal", "quota reset", dir); code != exitOK || !strings.Contains(errs, "rebuilt in") || !strings.Contains(errs, "1 binary") {
		t.Fatalf("first query: exit %d\n%s", code, errs)
	}
	code, out, errs := runCLI(t, "", "query", "--index", store, "--format", "json", "--goal", "quota reset", dir)
	if code != exitOK {
		t.Fatalf("second query: exit %d\n%s", code, errs)
	}
	var doc struct {
		Index []struct {
			State   string         `json:"state"`
			Files   int            `json:"files"`
			Skipped map[string]int `json:"skipped"`
		} `json:"index"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Index) != 1 || doc.Index[0].State != "fresh" || doc.Index[0].Files != 1 || doc.Index[0].Skipped["binary"] != 1 {
		t.Fatalf("json index report %+v (%v)\n%s", doc.Index, err, out)
	}
	if code, _, _ := runCLI(t, "", "query", "--index", store, "--no-index", "--goal", "x", dir); code != exitUsage {
		t.Errorf("--index with --no-index: exit %d", code)
	}
	if code, _, _ := runCLI(t, "", "query", "--max-file-size", "0", "--goal", "x", dir); code != exitUsage {
		t.Errorf("--max-file-size 0: exit %d", code)
	}
}

// The audit reports how long each stage took: the index line its state and
// time, the fan-out its time, and the composition its own (text and JSON).
func TestQueryReportsStageTimes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# Quota\n\nThe quota resets at midnight.\n"), 0o644)
	code, _, errs := runCLI(t, "", "query", "--no-index", "--goal", "quota reset", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	for _, re := range []string{`(?m)^# index indexed .*: .* memory in \d[^ ]*s `, `(?m)^# fan-out: 1 provider\(s\), \d[^ ]*s$`, `(?m)^# composition: \d[^ ]*s$`} {
		if !regexp.MustCompile(re).MatchString(errs) {
			t.Errorf("the audit has no line matching %s:\n%s", re, errs)
		}
	}
	code, out, errs := runCLI(t, "", "query", "--no-index", "--format", "json", "--goal", "quota reset", dir)
	if code != exitOK {
		t.Fatalf("json: exit %d\n%s", code, errs)
	}
	var doc struct {
		FanOut struct {
			Elapsed        int64 `json:"elapsed_ns"`
			ComposeElapsed int64 `json:"compose_elapsed_ns"`
		} `json:"fanout"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.FanOut.Elapsed <= 0 || doc.FanOut.ComposeElapsed <= 0 {
		t.Errorf("fan-out times %+v (%v)\n%s", doc.FanOut, err, out)
	}
}
