//go:build unix

package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/host/files"
	"github.com/ctxkit/ctxkit/mcpserver"
)

// A listed file swapped, after listing, for a symlink to a file outside
// the root (or a directory for a symlink out), or for a FIFO, is not read:
// the read neither serves the outside file nor blocks. (An outside probe
// read /etc/passwd through such a swap, and hung ctxkit mcp on a FIFO.)
func TestSwappedFilesAreNotRead(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(outside, []byte("SECRET-OUTSIDE"), 0o644))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, name := range []string{"link.md", "fifo.md", "sub/inner.md", "kept.md"} {
		must(os.WriteFile(filepath.Join(dir, name), []byte("# "+name+"\n\ntext\n"), 0o644))
	}
	cs := connect(t, nil, &mcpserver.ServerOptions{Roots: []string{dir}})
	must(os.Remove(filepath.Join(dir, "link.md")))
	must(os.Symlink(outside, filepath.Join(dir, "link.md")))
	must(os.Remove(filepath.Join(dir, "fifo.md")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo.md"), 0o644))
	must(os.RemoveAll(filepath.Join(dir, "sub")))
	must(os.Symlink(filepath.Dir(outside), filepath.Join(dir, "sub")))
	must(os.Rename(outside, filepath.Join(filepath.Dir(outside), "inner.md")))

	for _, name := range []string{"link.md", "fifo.md", "sub/inner.md"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: files.FileURI(filepath.Join(dir, name))})
		blocked := ctx.Err() != nil
		cancel()
		if blocked {
			t.Fatalf("%s: the read blocked", name)
		}
		if err == nil {
			t.Errorf("%s: read after the swap: %+v", name, rr.Contents)
		} else if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: %v", name, err)
		}
	}
	rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: files.FileURI(filepath.Join(dir, "kept.md"))})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "kept.md") {
		t.Fatalf("an unswapped file: %v %+v", err, rr)
	}
}
