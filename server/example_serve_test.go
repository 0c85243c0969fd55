package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/ctxkit/ctxkit/server"
	"github.com/ctxkit/ctxkit/server/api"
)

// Serve runs the handler with bounded memory: request bodies held at once
// and open connections are capped (zero fields keep the defaults).
func ExampleServe() {
	h := server.New(&server.Options{MaxBodyBytes: 1 << 20, MaxBodyBytesInFlight: 32 << 20, MaxConnections: 256})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, h) }()

	resp, err := http.Get("http://" + ln.Addr().String() + api.PathHealth)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	stop()
	fmt.Println(<-done)
	// Output:
	// 200
	// <nil>
}
