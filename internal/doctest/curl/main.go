// Command curl is the small part of curl that the docs' HTTP examples use,
// so internal/doctest runs them on a machine that has only Go: -s, -H
// 'Name: value' (repeatable), --data/-d TEXT or @FILE (a POST; as curl
// does, CR and LF are stripped from a file's bytes) and one URL. The body is
// written to stdout whatever the status, as curl without -f does. Any other
// flag is refused with exit status 2, so a doc cannot come to rely on a
// curl feature the test does not reproduce.
package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// request is what the command line asks for.
type request struct {
	url     string
	headers [][2]string
	data    []byte
	hasData bool
}

func run(args []string, stdout, stderr io.Writer) int {
	req, err := parse(args)
	if err != nil {
		fmt.Fprintln(stderr, "curl (doctest):", err)
		return 2
	}
	method, body := http.MethodGet, io.Reader(nil)
	if req.hasData {
		method, body = http.MethodPost, bytes.NewReader(req.data)
	}
	hr, err := http.NewRequest(method, req.url, body)
	if err != nil {
		fmt.Fprintln(stderr, "curl (doctest):", err)
		return 3
	}
	if req.hasData {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, h := range req.headers {
		hr.Header.Set(h[0], h[1])
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		fmt.Fprintln(stderr, "curl (doctest):", err)
		return 7 // curl's "failed to connect"
	}
	defer resp.Body.Close()
	if _, err := io.Copy(stdout, resp.Body); err != nil {
		fmt.Fprintln(stderr, "curl (doctest):", err)
		return 56 // curl's "failure in receiving network data"
	}
	return 0
}

func parse(args []string) (*request, error) {
	req := &request{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return args[i], nil
		}
		switch {
		case a == "-s" || a == "--silent":
		case a == "-H" || a == "--header":
			v, err := value()
			if err != nil {
				return nil, err
			}
			name, val, ok := strings.Cut(v, ":")
			if !ok || strings.TrimSpace(name) == "" {
				return nil, fmt.Errorf("header %q is not Name: value", v)
			}
			req.headers = append(req.headers, [2]string{strings.TrimSpace(name), strings.TrimSpace(val)})
		case a == "-d" || a == "--data":
			v, err := value()
			if err != nil {
				return nil, err
			}
			data := []byte(v)
			if file, ok := strings.CutPrefix(v, "@"); ok {
				if data, err = os.ReadFile(file); err != nil {
					return nil, err
				}
				data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r"), nil), []byte("\n"), nil)
			}
			if req.hasData {
				data = append(append(req.data, '&'), data...)
			}
			req.data, req.hasData = data, true
		case strings.HasPrefix(a, "-"):
			return nil, fmt.Errorf("flag %s is not supported by the docs' curl", a)
		case req.url != "":
			return nil, fmt.Errorf("a second URL %q", a)
		default:
			req.url = a
		}
	}
	if req.url == "" {
		return nil, fmt.Errorf("no URL")
	}
	return req, nil
}
