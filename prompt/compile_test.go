package prompt

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// compileCase is a small program that uses this package. The line marked
// with "// ERROR" must be the one the compiler rejects, with a message
// matching want; a case without want must compile.
type compileCase struct {
	name string
	src  string
	want string // regexp the compiler's message must match; "" = must compile
}

const compilePreamble = `package check

import (
	"encoding/json"
	"fmt"

	"github.com/ctxkit/ctxkit/prompt"
)

var (
	_ = json.Marshal
	_ = fmt.Sprint
)

`

var compileCases = []compileCase{
	{name: "correct use compiles", src: `
func use(body string, summary prompt.AgentText) (string, error) {
	p := prompt.New().
		Text("Triage:").
		Untrusted(prompt.External(body)).
		Untrusted(summary).
		Untrusted(&summary)
	var c prompt.UntrustedContent = summary
	c = prompt.External("log")
	p.Untrusted(c)
	_ = fmt.Sprint(summary) // prints the placeholder, never the text
	_, _ = json.Marshal(summary)
	_ = summary.Raw() // the explicit escape hatch
	_ = summary.Equal(prompt.NewAgentText("x"))
	return p.Build()
}
`},
	{name: "agent text is not trusted text", want: `cannot use summary \(variable of struct type prompt\.AgentText\) as string value in argument to .*Text`, src: `
func use(summary prompt.AgentText) {
	prompt.New().Text(summary) // ERROR
}
`},
	{name: "agent text does not convert to string", want: `cannot convert summary \(variable of struct type prompt\.AgentText\) to type string`, src: `
func use(summary prompt.AgentText) string {
	return string(summary) // ERROR
}
`},
	{name: "agent text does not convert to External", want: `cannot convert summary \(variable of struct type prompt\.AgentText\) to type prompt\.External`, src: `
func use(summary prompt.AgentText) prompt.External {
	return prompt.External(summary) // ERROR
}
`},
	{name: "agent text is no fmt.Stringer", want: `prompt\.AgentText does not implement fmt\.Stringer \(missing method String\)`, src: `
func use(summary prompt.AgentText) fmt.Stringer {
	return summary // ERROR
}
`},
	{name: "agent text is not comparable", want: `cannot compare a == b|invalid operation: a == b`, src: `
func use(a, b prompt.AgentText) bool {
	return a == b // ERROR
}
`},
	{name: "untrusted content cannot be implemented outside the package", want: `fake does not implement prompt\.UntrustedContent \(unexported method untrustedText\)`, src: `
type fake struct{}

func (fake) untrustedText() string { return "trusted, honest" }

var _ prompt.UntrustedContent = fake{} // ERROR
`},
	{name: "untrusted content does not hand out its text", want: `c\.untrustedText undefined`, src: `
func use(c prompt.UntrustedContent) string {
	return c.untrustedText() // ERROR
}
`},
	{name: "a plain string must be marked External", want: `cannot use "a CI log" \(.*\) as prompt\.UntrustedContent value.*missing method untrustedText`, src: `
func use() {
	prompt.New().Untrusted("a CI log") // ERROR
}
`},
}

// TestCompileTimeGuarantees is the Go counterpart of compile_fail doctests:
// it builds each case as a package of this module (through a build overlay,
// so nothing is written to the source tree and nothing is downloaded) and
// checks that the misuses fail to compile at the marked line, for the
// expected reason, while the correct program compiles.
func TestCompileTimeGuarantees(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to type-check the cases: %v", err)
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for i, c := range compileCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := compilePreamble + c.src
			errLine := 0
			for n, line := range strings.Split(src, "\n") {
				if strings.HasSuffix(line, "// ERROR") {
					errLine = n + 1
				}
			}
			if (errLine == 0) != (c.want == "") {
				t.Fatalf("case is malformed: ERROR marker at line %d, want %q", errLine, c.want)
			}
			file := filepath.Join(tmp, "case"+strconv.Itoa(i)+".go")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			// A virtual package directory inside the module.
			pkgDir := filepath.Join(root, "prompt", "zz_compilecheck_"+strconv.Itoa(i))
			overlay, err := json.Marshal(map[string]map[string]string{
				"Replace": {filepath.Join(pkgDir, "check.go"): file},
			})
			if err != nil {
				t.Fatal(err)
			}
			overlayFile := filepath.Join(tmp, "overlay"+strconv.Itoa(i)+".json")
			if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(goBin, "build", "-overlay", overlayFile, "./prompt/zz_compilecheck_"+strconv.Itoa(i))
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			if c.want == "" {
				if err != nil {
					t.Fatalf("the correct program does not compile: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("compiled, but must fail at line %d with %q", errLine, c.want)
			}
			prefix := filepath.Base(file) + ":" + strconv.Itoa(errLine) + ":"
			matched := false
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, prefix) && regexp.MustCompile(c.want).MatchString(line) {
					matched = true
				}
			}
			if !matched {
				t.Fatalf("want an error at %s matching %q, got:\n%s", prefix, c.want, out)
			}
		})
	}
}

// moduleRoot finds the directory holding go.mod above the package.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
