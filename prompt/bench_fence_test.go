package prompt

import (
	"io"
	"testing"

	"github.com/ctxkit/ctxkit/internal/fence/fencetest"
)

// BenchmarkRenderSizes: WriteTo of a prompt whose untrusted part is 1, 2, 4 or
// 8 MiB of each content shape of fencetest.Shapes; cpu-ns/B is the process CPU time
// per content byte, the figure the adversarial/benign ratio is taken from.
func BenchmarkRenderSizes(b *testing.B) {
	fencetest.BenchShapes(b, tagName, func(content string) func() error {
		p := New().Text("Summarise:").Untrusted(External(content))
		return func() error { _, err := p.WriteTo(io.Discard); return err }
	})
}
