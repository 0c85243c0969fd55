package doctest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxkit/ctxkit/internal/announce"
	"github.com/ctxkit/ctxkit/internal/tooltest"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// docAddr is the server address the docs are written against.
const docAddr = "127.0.0.1:8787"

// block is one fenced code block of a Markdown page.
type block struct {
	file    string
	line    int    // line of the opening fence, 1-based
	lang    string // first word of the info string
	body    string
	marker  string // "test", "no-test", "output" or ""
	exit    int    // expected exit status for "test"
	output  string // the following <!-- output --> block, if any
	include string // file named by <!-- include: PATH -->, whose text must hold the block
}

var includeRE = regexp.MustCompile(`^<!--\s*include:\s*(\S+)\s*-->$`)

// exampleRE matches a block running one of the Go examples, which the test
// replaces by the binary it built once.
var exampleRE = regexp.MustCompile(`go run \./examples/([a-z]+)`)

// tools is the directory buildTools filled, once per test process
// (TestMain removes it).
var tools struct {
	once sync.Once
	dir  string
	err  error
}

// TestMain removes the tools the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if tools.dir != "" {
		os.RemoveAll(tools.dir)
	}
	os.Exit(code)
}

// builtTools returns the directory holding ctxkit, every Go example under
// examples/ (a go run in the copied tree would compile the module again,
// block after block) and the docs' curl (internal/doctest/curl), built in
// one go build for all the tests of the process, so the docs' blocks need
// only Go and bash.
func builtTools(t *testing.T) string {
	t.Helper()
	tools.once.Do(func() {
		root, err := filepath.Abs(repoRoot)
		if err == nil {
			tools.dir, err = os.MkdirTemp("", "ctxkit-doctest-")
		}
		if err == nil {
			err = buildTools(root, tools.dir)
		}
		tools.err = err
	})
	if tools.err != nil {
		t.Fatal(tools.err)
	}
	return tools.dir
}

func buildTools(root, bin string) error {
	mains, err := filepath.Glob(filepath.Join(root, "examples", "*", "main.go"))
	if err != nil || len(mains) == 0 {
		return fmt.Errorf("no Go example under examples/ (%v)", err)
	}
	args := []string{"build", "-o", bin + string(os.PathSeparator), "./cmd/ctxkit", "./internal/doctest/curl"}
	for _, m := range mains {
		args = append(args, "./examples/"+filepath.Base(filepath.Dir(m)))
	}
	build := exec.Command("go", args...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// needPython skips a block that runs python3 where python3 is not
// installed, except under CI (tooltest.Missing).
func needPython(t *testing.T, b block) {
	t.Helper()
	if b.lang != "python" && !strings.Contains(b.body, "python3") {
		return
	}
	if _, err := exec.LookPath("python3"); err != nil {
		tooltest.Missing(t, "python3", fmt.Errorf("%s:%d runs it: %w", b.file, b.line, err))
	}
}

// buildRE matches a block building the CLI, which the test replaces by a
// copy of the binary it built once.
var buildRE = regexp.MustCompile(`go build -o (\S+) \./cmd/ctxkit`)

var markerRE = regexp.MustCompile(`^<!--\s*(test(?:\s+exit=(\d+))?|no-test:\s*\S.*|output)\s*-->$`)

// parseBlocks returns the fenced blocks of a Markdown document with the
// marker on the line before each. An unclosed fence is an error.
func parseBlocks(file string, src []byte) ([]block, error) {
	var out []block
	lines := strings.Split(string(src), "\n")
	prev := ""
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \r")
		if !strings.HasPrefix(l, "```") {
			if strings.TrimSpace(l) != "" {
				prev = strings.TrimSpace(l)
			}
			continue
		}
		b := block{file: file, line: i + 1}
		if f := strings.Fields(strings.TrimPrefix(l, "```")); len(f) > 0 {
			b.lang = f[0]
		}
		if m := includeRE.FindStringSubmatch(prev); m != nil {
			b.include = m[1]
		} else if m := markerRE.FindStringSubmatch(prev); m != nil {
			switch {
			case strings.HasPrefix(m[1], "test"):
				b.marker = "test"
				if m[2] != "" {
					b.exit, _ = strconv.Atoi(m[2])
				}
			case strings.HasPrefix(m[1], "no-test"):
				b.marker = "no-test"
			default:
				b.marker = "output"
			}
		} else if strings.HasPrefix(prev, "<!--") && strings.Contains(prev, "test") {
			return nil, fmt.Errorf("%s:%d: malformed marker %q; use <!-- test -->, <!-- test exit=N --> or <!-- no-test: REASON -->", file, i, prev)
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimRight(lines[i], " \r") == "```" {
				closed = true
				break
			}
			body = append(body, lines[i])
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: unclosed fence", file, b.line)
		}
		b.body = strings.Join(body, "\n") + "\n"
		prev = ""
		if b.marker == "output" && len(out) > 0 && out[len(out)-1].marker == "test" {
			out[len(out)-1].output = b.body
		}
		out = append(out, b)
	}
	return out, nil
}

func isShell(lang string) bool { return lang == "sh" || lang == "bash" || lang == "shell" }

// runsCtxkit reports whether a shell block invokes the project's CLI.
func runsCtxkit(body string) bool {
	return regexp.MustCompile(`(^|[\s;&|(])(ctxkit\s|go run \./cmd/ctxkit)`).MatchString(body)
}

func TestParseBlocks(t *testing.T) {
	doc := "# t\n<!-- test -->\n```sh\nctxkit help\n```\n<!-- output -->\n```text\nusage\n```\n" +
		"<!-- include: examples/x/main.go -->\n```go\nfunc main() {}\n```\n" +
		"<!-- test exit=2 -->\n```sh {x}\nctxkit nope\n```\n\n<!-- no-test: serves forever -->\n```sh\nctxkit serve\n```\n" +
		"```go\nfmt.Println()\n```\n"
	bs, err := parseBlocks("t.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 6 {
		t.Fatalf("%d blocks", len(bs))
	}
	if bs[2].include != "examples/x/main.go" || bs[2].body != "func main() {}\n" {
		t.Fatalf("include block: %+v", bs[2])
	}
	bs = append(bs[:2], bs[3:]...)
	if bs[0].marker != "test" || bs[0].body != "ctxkit help\n" || bs[0].output != "usage\n" || bs[0].line != 3 {
		t.Fatalf("block 0: %+v", bs[0])
	}
	if bs[2].marker != "test" || bs[2].exit != 2 || bs[2].lang != "sh" {
		t.Fatalf("block 2: %+v", bs[2])
	}
	if bs[3].marker != "no-test" || bs[4].marker != "" || bs[4].lang != "go" {
		t.Fatalf("blocks 3, 4: %+v %+v", bs[3], bs[4])
	}
	if _, err := parseBlocks("u.md", []byte("```sh\nx\n")); err == nil {
		t.Fatal("unclosed fence accepted")
	}
	if _, err := parseBlocks("m.md", []byte("<!-- tests -->\n```sh\nx\n```\n")); err == nil {
		t.Fatal("malformed marker accepted")
	}
	if !runsCtxkit("x | ctxkit compose -\n") || !runsCtxkit("go run ./cmd/ctxkit query\n") || runsCtxkit("echo ctxkitty\n") {
		t.Fatal("runsCtxkit")
	}
}

// pages returns README.md and every docs/*.md page, relative to root.
func pages(t *testing.T, root string) []string {
	t.Helper()
	ps, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range ps {
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
	}
	return out
}

func allBlocks(t *testing.T, root string) []block {
	t.Helper()
	var all []block
	for _, p := range pages(t, root) {
		src, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := parseBlocks(p, src)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, bs...)
	}
	return all
}

// TestIncludedCodeMatchesItsFile checks that a block marked
// <!-- include: PATH --> is a verbatim part of that file, so a code sample
// in the docs is the code that builds and runs.
func TestIncludedCodeMatchesItsFile(t *testing.T) {
	n := 0
	for _, b := range allBlocks(t, repoRoot) {
		if b.include == "" {
			continue
		}
		n++
		src, err := os.ReadFile(filepath.Join(repoRoot, b.include))
		if err != nil {
			t.Errorf("%s:%d: %v", b.file, b.line, err)
			continue
		}
		if !strings.Contains(string(src), b.body) {
			t.Errorf("%s:%d: the block is not a verbatim part of %s", b.file, b.line, b.include)
		}
	}
	if n == 0 {
		t.Fatal("no <!-- include: PATH --> block found; the README's Go example should carry one")
	}
}

func TestEveryCtxkitCommandIsMarked(t *testing.T) {
	for _, b := range allBlocks(t, repoRoot) {
		if isShell(b.lang) && b.marker == "" && runsCtxkit(b.body) {
			t.Errorf("%s:%d: a shell block running ctxkit has no marker; put <!-- test --> (or <!-- no-test: REASON -->) on the line before its fence", b.file, b.line)
		}
	}
}

// TestDocs runs every block marked <!-- test --> in a copy of the repository.
func TestDocs(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is required to run the docs' shell blocks")
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var runnable []block
	for _, b := range allBlocks(t, root) {
		if b.marker == "test" {
			if !isShell(b.lang) && b.lang != "python" {
				t.Fatalf("%s:%d: cannot run a %q block", b.file, b.line, b.lang)
			}
			runnable = append(runnable, b)
		}
	}
	if len(runnable) == 0 {
		t.Fatal("no runnable blocks found in the docs")
	}
	bin := builtTools(t)
	tree := filepath.Join(t.TempDir(), "repo")
	copyTree(t, root, tree)

	url := startServer(t, filepath.Join(bin, "ctxkit"), tree)
	addr := strings.TrimPrefix(url, "http://")
	// The files provider keeps its indexes under the user cache directory;
	// give the docs' commands one of their own.
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CTXKIT_URL="+url, "XDG_CACHE_HOME="+t.TempDir())
	for _, b := range runnable {
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			needPython(t, b)
			body := strings.ReplaceAll(b.body, "go run ./cmd/ctxkit", "ctxkit")
			body = exampleRE.ReplaceAllString(body, "$1")
			body = buildRE.ReplaceAllString(body, `cp "$$(command -v ctxkit)" $1`)
			body = strings.ReplaceAll(body, docAddr, addr)
			if strings.Contains(body, "go run ") {
				t.Fatalf("%s:%d: a go run the test does not replace would compile the module in the copied tree; build it in builtTools", b.file, b.line)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var cmd *exec.Cmd
			if b.lang == "python" {
				cmd = exec.CommandContext(ctx, "python3", "-")
			} else {
				cmd = exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-s")
			}
			cmd.Dir, cmd.Env = tree, env
			cmd.Stdin = strings.NewReader(body)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if err != nil {
				ee, ok := err.(*exec.ExitError)
				if !ok {
					t.Fatalf("run: %v", err)
				}
				code = ee.ExitCode()
			}
			if code != b.exit {
				t.Fatalf("exit %d, want %d\n--- block\n%s--- stdout\n%s--- stderr\n%s", code, b.exit, b.body, stdout.String(), stderr.String())
			}
			if b.output != "" {
				if missing := missingLines(stdout.String(), b.output); missing != "" {
					t.Fatalf("output lacks %q (expected lines must appear in order)\n--- stdout\n%s--- stderr\n%s", missing, stdout.String(), stderr.String())
				}
			}
		})
	}
}

// missingLines returns the first non-empty line of want that does not
// appear in got after the previous one, or "".
func missingLines(got, want string) string {
	rest := got
	for _, l := range strings.Split(want, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		i := strings.Index(rest, l)
		if i < 0 {
			return l
		}
		rest = rest[i+len(l):]
	}
	return ""
}

// startServer runs `ctxkit serve` on a free loopback port with the docs'
// example config and stops it with SIGTERM when the test ends, checking
// that it shuts down cleanly.
func startServer(t *testing.T, ctxkit, tree string) string {
	t.Helper()
	cmd := exec.Command(ctxkit, "serve", "--addr", "127.0.0.1:0", "--config", filepath.Join(tree, "docs", "examples", "ctxkit.json"))
	cmd.Dir = tree
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logs strings.Builder
	urlc, drained := announce.Watch(stderr, func(line string) {
		logMu.Lock()
		logs.WriteString(line + "\n")
		logMu.Unlock()
	})
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { <-drained; done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				logMu.Lock()
				t.Errorf("ctxkit serve after SIGTERM: %v\n%s", err, logs.String())
				logMu.Unlock()
			}
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("ctxkit serve did not stop within 15 s of SIGTERM")
		}
	})
	select {
	case u := <-urlc:
		return u
	case <-time.After(30 * time.Second):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("ctxkit serve did not start:\n%s", logs.String())
		return ""
	}
}

// copyTree copies the repository's files (not .git) from src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		info, err := in.Stat()
		if err != nil {
			return err
		}
		out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy repository: %v", err)
	}
}
