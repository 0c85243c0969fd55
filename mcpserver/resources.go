package mcpserver

import (
	"context"
	"fmt"
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
			s.AddResource(fileResource(label, rel, path, info), readFile(path, maxBytes))
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

// readFile reads the file as it is now: UTF-8 as text, anything else as a
// blob. A file grown past maxBytes since it was listed is refused.
func readFile(path string, maxBytes int64) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		defer f.Close()
		b := make([]byte, maxBytes+1)
		n, _ := f.Read(b)
		for n < len(b) {
			m, err := f.Read(b[n:])
			n += m
			if err != nil || m == 0 {
				break
			}
		}
		if int64(n) > maxBytes {
			return nil, fmt.Errorf("%s: larger than %d bytes", req.Params.URI, maxBytes)
		}
		c := &mcp.ResourceContents{URI: req.Params.URI, MIMEType: mimeOf(path)}
		if utf8.Valid(b[:n]) {
			c.Text = string(b[:n])
		} else {
			c.Blob = b[:n]
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
	}
}
