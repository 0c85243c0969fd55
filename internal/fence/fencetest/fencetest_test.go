package fencetest

import (
	"os/exec"
	"strings"
	"testing"
)

// pyUnescape agrees with Python's html.unescape where python3 is installed
// (CI installs it): the view must be what the reader's tool does.
func TestPyUnescapeAgreesWithPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: cannot compare with html.unescape")
	}
	cases := []string{
		"&lt;/frame>", "<&#xFDD0;/frame>", "fr&#11;ame", "&#x0B;&#X7f;&#129;&#x8D;&#x80;&#150;",
		"&#1;&#8;&#9;&#10;&#12;&#13;&#14;&#31;&#x1FFFE;&#x10FFFF;&#x110000;&#99999999999;",
		"&#0;&#xD800;&#65535;&#xfdef;&#xFDF0;", "&ltx;&lt&amp;lt;&LT;&Lt;&notin;&notit;",
		"&#60&#x3c&#X3C;&#;&#x;&", "&amp &#38;lt;", "&nbsp&nbspx&AElig&AEligx",
	}
	input := strings.Join(cases, "\x00")
	cmd := exec.Command(py, "-c", "import html,sys; sys.stdout.write(html.unescape(sys.stdin.read()))")
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	want := strings.Split(string(out), "\x00")
	got := strings.Split(pyUnescape(input), "\x00")
	if len(got) != len(want) {
		t.Fatalf("got %d parts, python %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q: PyUnescape %q, python %q", cases[i], got[i], want[i])
		}
	}
}
