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
		{"-sticky", "0"},
		{"-sticky", "0.1,x"},
		{"-sticky", "-0.1"},
		{"-sticky", "Inf"},
		{"-sessions", "0"},
	} {
		if code := run(args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code := run([]string{"-turns", "3", "-offered", "10", "-churn", "20", "-sticky", "0.05, 0.1"}); code != 0 {
		t.Errorf("a small session with two margins: exit %d", code)
	}
	if code := run([]string{"-turns", "3", "-offered", "10", "-churn", "20", "-model", "tail", "-sessions", "3"}); code != 0 {
		t.Errorf("three small sessions: exit %d", code)
	}
	if code := run([]string{"-turns", "3", "-offered", "10", "-churn", "20", "-sticky", ""}); code != 0 {
		t.Errorf("a small session: exit %d", code)
	}
}
