package mcpserver

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxkit/ctxkit/host/files"
)

// addRoots registers every regular file under each root, up to maxBytes,
// as a resource named by its path relative to the root. Hidden files and
// directories are left out, as the files provider leaves them out.
func addRoots(s *mcp.Server, roots []string, maxBytes int64) error {
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			return fmt.Errorf("mcpserver: root %s: %w", root, err)
		}
		if st, err := os.Stat(abs); err != nil {
			return fmt.Errorf("mcpserver: root: %w", err)
		} else if !st.IsDir() {
			return fmt.Errorf("mcpserver: root %s: not a directory", root)
		}
		label := filepath.Base(abs)
		// Reads go through the root, opened now: a file swapped for a
		// symlink (or a directory for one) after listing cannot lead a
		// read outside it (os.Root refuses any path that escapes).
		dir, err := os.OpenRoot(abs)
		if err != nil {
			return fmt.Errorf("mcpserver: root: %w", err)
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable entry is left out, not fatal
			}
			if path != abs && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Size() > maxBytes {
				return nil
			}
			rel, _ := filepath.Rel(abs, path)
			s.AddResource(fileResource(label, rel, path, info), readFile(dir, rel, maxBytes))
			return nil
		})
		if err != nil {
			return fmt.Errorf("mcpserver: root %s: %w", root, err)
		}
	}
	return nil
}

func fileResource(label, rel, path string, info fs.FileInfo) *mcp.Resource {
	name := filepath.ToSlash(filepath.Join(label, rel))
	return &mcp.Resource{
		URI:         files.FileURI(path),
		Name:        name,
		Title:       name,
		MIMEType:    mimeOf(path),
		Size:        info.Size(),
		Annotations: &mcp.Annotations{LastModified: info.ModTime().UTC().Format(time.RFC3339)},
	}
}

func mimeOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".go":
		return "text/x-go"
	case "":
		return "text/plain"
	}
	if t := mime.TypeByExtension(filepath.Ext(path)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// readFile reads the file at rel under dir as it is now: UTF-8 as text,
// anything else as a blob. A path that now leaves dir (through a symlink
// swapped in since listing) or names anything but a regular file (a FIFO,
// which would block the read) is not found; a file grown past maxBytes
// since it was listed is refused.
func readFile(dir *os.Root, rel string, maxBytes int64) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		f, err := dir.OpenFile(rel, os.O_RDONLY|openNonBlocking, 0)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		b, err := io.ReadAll(io.LimitReader(f, maxBytes+1)) // as large as the file, not as the bound
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.Params.URI, err)
		}
		if int64(len(b)) > maxBytes {
			return nil, fmt.Errorf("%s: larger than %d bytes", req.Params.URI, maxBytes)
		}
		c := &mcp.ResourceContents{URI: req.Params.URI, MIMEType: mimeOf(rel)}
		if utf8.Valid(b) {
			c.Text = string(b)
		} else {
			c.Blob = b
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
	}
}
