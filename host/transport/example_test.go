package transport_test

import (
	"context"
	"fmt"

	"github.com/ctxkit/ctxkit/host/transport"
)

// A child process is a Connection: here cat, which sends back every line it
// reads. Close ends it with its whole process tree.
func ExampleStdio() {
	p, err := transport.Stdio{Program: "cat"}.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = p.Write(context.Background(), []byte(`{"type":"shutdown"}`))
	line, _ := p.Read()
	fmt.Println(string(line))
	fmt.Println(p.Close())
	// Output:
	// {"type":"shutdown"}
	// <nil>
}
