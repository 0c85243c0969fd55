package serve_test

import (
	"context"
	"fmt"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/serve"
	"github.com/ctxkit/ctxkit/host/transport"
	"github.com/ctxkit/ctxkit/wire"
)

type hello struct{}

func (hello) Handshake(context.Context, string) (*wire.HandshakeAck, error) {
	return &wire.HandshakeAck{ProtocolVersion: wire.ProtocolVersion, Provider: frame.ProviderInfo{Name: "hello", Version: "1"}}, nil
}
func (hello) Query(context.Context, *frame.Query) (*wire.Result, error) { return &wire.Result{}, nil }
func (hello) Verify(context.Context, []frame.ID) ([]wire.Verdict, error) {
	return nil, nil
}

// A provider served on one end of an in-memory pipe answers what a host
// writes on the other.
func ExampleConn() {
	host, prov := transport.Pipe()
	go func() { _ = serve.Conn(context.Background(), hello{}, prov) }()
	_ = host.Write(context.Background(), []byte(`{"type":"handshake","protocol_version":"contextgraph/1.0"}`))
	reply, _ := host.Read()
	env, _ := wire.Unmarshal(reply)
	fmt.Println(env.Type(), env.(*wire.HandshakeAck).Provider.Name)
	_ = host.Close()
	// Output: handshake_ack hello
}
