package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxkit/ctxkit/frame"
	"github.com/ctxkit/ctxkit/host/consent"
	"github.com/ctxkit/ctxkit/host/serve"
	"github.com/ctxkit/ctxkit/wire"
)

// countingTransport records every request it is asked to carry.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("counting transport: no network in this test")
}

func TestHTTPRefusesPlaintextNonLoopbackWithoutDialing(t *testing.T) {
	for _, u := range []string{"http://example.com/cgp", "http://10.0.0.1:8080/", "http://[2001:db8::1]/", "http://localhost.evil.example/"} {
		ct := &countingTransport{}
		h := New(nil)
		err := h.AddHTTP("remote", u, &HTTPOptions{Transport: ct, Credential: NewCredential("tok-SECRET")})
		if !errors.Is(err, ErrInsecureTransport) {
			t.Errorf("%s: err = %v, want insecure transport", u, err)
		}
		if ct.n.Load() != 0 {
			t.Errorf("%s: %d requests attempted", u, ct.n.Load())
		}
		if strings.Contains(fmt.Sprint(err), "SECRET") {
			t.Errorf("credential in error")
		}
		h.Close(context.Background())
	}
	for _, u := range []string{"http://127.0.0.1:1/", "http://localhost:1/", "http://[::1]:1/", "https://example.com/"} {
		ct := &countingTransport{}
		if _, err := dialHTTP("p", u, &HTTPOptions{Transport: ct}); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	if _, err := dialHTTP("p", "https://user:pw@example.com/", nil); !errors.Is(err, ErrInsecureTransport) || strings.Contains(err.Error(), "pw") {
		t.Errorf("userinfo URL: %v", err)
	}
}

func TestCredentialRedacted(t *testing.T) {
	c := NewCredential("tok-SECRET-123")
	type holder struct {
		Pub  Credential
		priv Credential
	}
	hv := holder{c, c}
	outs := []string{
		fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s %q %x %X %d", c, c, c, c, c, c, c, c),
		fmt.Sprintf("%v %+v %#v", hv, hv, hv), fmt.Sprintf("%v", &hv), c.String(),
		fmt.Sprintf("%v", HTTPOptions{Credential: c}), fmt.Sprintf("%+v", &HTTPOptions{Credential: c}),
	}
	j, _ := json.Marshal(hv)
	outs = append(outs, string(j))
	j, _ = json.Marshal(map[string]any{"c": c, "p": &c})
	outs = append(outs, string(j))
	var back map[string]string
	if err := json.Unmarshal(j, &back); err != nil || back["c"] != redacted || back["p"] != redacted {
		t.Errorf("JSON form %s, want both %q", j, redacted)
	}
	var logBuf bytes.Buffer
	log.New(&logBuf, "", 0).Printf("cred=%v opts=%+v", c, HTTPOptions{Credential: c})
	outs = append(outs, logBuf.String())
	for _, o := range outs {
		if strings.Contains(o, "SECRET") || strings.Contains(o, "tok-") {
			t.Errorf("credential leaked: %s", o)
		}
	}
	if !strings.Contains(outs[0], "redacted") {
		t.Errorf("String = %q", outs[0])
	}
}

// cgpServer serves s over HTTP and records the Authorization headers seen.
func cgpServer(t *testing.T, s serve.Server, auth *atomic.Value) *httptest.Server {
	inner := serve.HTTP(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth != nil {
			auth.Store(r.Header.Get("Authorization"))
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPLoopbackProvider(t *testing.T) {
	noLeak(t)
	var auth atomic.Value
	srv := cgpServer(t, &honest{frames: []frame.Frame{mkFrame("h", "over http", 0.5)}, flow: frame.DataFlow{Egress: true}}, &auth)
	h := New(nil)
	if err := h.AddHTTP("web", srv.URL, &HTTPOptions{Credential: NewCredential("tok-SECRET")}); err != nil {
		t.Fatal(err)
	}
	// Loopback: not forced to egress, but this provider declares egress itself.
	fo := h.QueryAll(context.Background(), probe())
	if fo.Outcomes[0].Status != StatusConsentRequired {
		t.Fatalf("egress-declaring http provider: %+v", fo.Outcomes[0])
	}
	h.Consent().Record(consent.Record{ProviderID: "web", GrantedScope: "egress"})
	fo = h.QueryAll(context.Background(), probe())
	if o := fo.Outcomes[0]; o.Status != StatusFrames || len(o.Frames) != 1 || o.Frames[0].Content != "over http" {
		t.Fatalf("outcome: %+v", o)
	}
	if got := auth.Load(); got != "Bearer tok-SECRET" {
		t.Errorf("authorization header = %v", got)
	}
	out := h.Verify(context.Background(), []frame.ID{{Provider: "web", Frame: "h", Digest: "sha256:" + string(make64('a'))}})
	if len(out.Dropped) != 1 || out.Dropped[0].Reason != dropStale {
		t.Errorf("verify over http: %+v", out)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("close (204 shutdown): %v", err)
	}
}

func TestHTTPNonLoopbackIsEgress(t *testing.T) {
	// An https provider on a non-loopback name that claims no egress is
	// still treated as egress (C4), and is not even dialled before consent
	// covers it. The transport maps the name to a local test server, so no
	// real network is used, and counts the dials.
	srv := httptest.NewTLSServer(serve.HTTP(&honest{frames: []frame.Frame{mkFrame("h", "x", 0.5)}}))
	defer srv.Close()
	tr := srv.Client().Transport.(*http.Transport).Clone()
	addr := strings.TrimPrefix(srv.URL, "https://")
	var dials atomic.Int32
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	// Without consent: refused, and not dialled for the query, nor for
	// the shutdown when the host closes.
	refused := New(nil)
	if err := refused.AddHTTP("remote", "https://provider.example.com/cgp", &HTTPOptions{Transport: tr}); err != nil {
		t.Fatal(err)
	}
	fo := refused.QueryAll(context.Background(), probe())
	if fo.Outcomes[0].Status != StatusConsentRequired {
		t.Fatalf("non-loopback provider not gated: %+v", fo.Outcomes[0])
	}
	if _, err := refused.Connect(context.Background(), "remote"); !errors.Is(err, ErrConsentRequired) ||
		!strings.Contains(err.Error(), `no connection was opened; grant with: ctxkit consent grant remote --endpoint https://provider.example.com/cgp`) {
		t.Errorf("Connect before consent: %v", err)
	}
	refused.Close(context.Background())
	if n := dials.Load(); n != 0 {
		t.Fatalf("the provider was dialled %d times before consent", n)
	}
	h := New(nil)
	defer h.Close(context.Background())
	if err := h.AddHTTP("remote", "https://provider.example.com/cgp", &HTTPOptions{Transport: tr}); err != nil {
		t.Fatal(err)
	}
	h.Consent().Record(consent.Record{ProviderID: "remote", GrantedScope: "egress"})
	if o := h.QueryAll(context.Background(), probe()).Outcomes[0]; o.Status != StatusFrames {
		t.Fatalf("after consent: %+v", o)
	}
	info, _, _ := h.info("remote")
	if !info.DataFlow.Egress {
		t.Errorf("egress not forced")
	}
}

func TestHTTPStatusHandling(t *testing.T) {
	var mode atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"handshake"`)) {
			io.WriteString(w, ackLine(wire.ProtocolVersion, true, ""))
			return
		}
		switch mode.Load() {
		case "401":
			w.WriteHeader(401)
		case "400":
			w.WriteHeader(400)
			io.WriteString(w, `{"type":"error","code":"bad_request","message":"nope"}`)
		case "502":
			w.WriteHeader(502)
			io.WriteString(w, "bad gateway")
		case "garbage":
			io.WriteString(w, "<html>")
		case "wrongid":
			io.WriteString(w, `{"type":"frames","id":"zzz","result":{"frames":[],"truncated":false}}`)
		}
	}))
	defer srv.Close()
	h := New(nil)
	defer h.Close(context.Background())
	h.AddHTTP("p", srv.URL, &HTTPOptions{Credential: NewCredential("tok-SECRET")})
	check := func(m string, want error) {
		mode.Store(m)
		_, err := h.QueryProvider(context.Background(), "p", probe())
		if !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", m, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: credential in error", m)
		}
	}
	check("401", errUnauthorized)
	check("400", errProviderError)
	check("502", errTransport)
	check("garbage", errMalformed)
	check("wrongid", errCorrelationMismatch)
	mode.Store("400")
	_, err := h.QueryProvider(context.Background(), "p", probe())
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.CodeBadRequest {
		t.Errorf("400 lost its code: %v", err)
	}
}
