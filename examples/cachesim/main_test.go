package main

import "testing"

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-turns", "1"},
		{"-churn", "101"},
		{"-model", "zipf"},
		{"-jitter", "-1"},
		{"extra"},
		{"-no-such-flag"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"-turns", "3", "-offered", "10", "-churn", "20"}); code != 0 {
		t.Errorf("a small session: exit %d", code)
	}
}
