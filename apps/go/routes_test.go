// Exercises the routes through net/http/httptest: statuses, bodies and the
// Server and Content-Type headers the contract demands on every response.
package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRoutesFollowContract(t *testing.T) {
	srv := httptest.NewServer(withServerHeader(newMux()))
	defer srv.Close()

	cases := []struct {
		path, body, contentType string
		status                  int
	}{
		{"/plaintext", "Hello, World!", "text/plain", 200},
		{"/json", `{"message":"Hello, World!"}`, "application/json", 200},
		{"/values/5", "5", "application/json", 200},
		{"/values/007?x=1", "7", "application/json", 200},
		{"/values/2147483647", "2147483647", "application/json", 200},
		{"/api/count/0", "", "text/plain", 200},
		{"/api/count/3", "1 2 3", "text/plain", 200},
		{"/api/fib/5", "0 1 1 2 3 5", "text/plain", 200},
		{"/cpu/1000", `{"result":"6248290529083013365"}`, "application/json", 200},
		{"/lock/10", `{"result":"10344392119048899982"}`, "application/json", 200},
		{"/alloc/64", `{"allocated_kib":64}`, "application/json", 200},
		{"/sleep/0", `{"slept_ms":0}`, "application/json", 200},
		{"/values/-1", "", "", 400},
		{"/values/+1", "", "", 400},
		{"/values/1a", "", "", 400},
		{"/values/2147483648", "", "", 400},
		{"/values/99999999999999999999999", "", "", 400},
		{"/api/fib/10001", "", "", 400},
		{"/api/count/100001", "", "", 400},
		{"/api/fib/abc", "", "", 400},
		{"/values/", "", "", 404},
		{"/values/5/6", "", "", 404},
		{"/nope", "", "", 404},
	}
	for _, c := range cases {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatalf("GET %s: %v", c.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("GET %s: status %d, want %d", c.path, resp.StatusCode, c.status)
		}
		if c.body != "" && string(body) != c.body {
			t.Errorf("GET %s: body %q, want %q", c.path, body, c.body)
		}
		ct := resp.Header.Get("Content-Type")
		if ct == "" || !strings.HasPrefix(ct, c.contentType) {
			t.Errorf("GET %s: Content-Type %q, want %q", c.path, ct, c.contentType)
		}
		if resp.Header.Get("Server") != serverHeader || resp.Header.Get("Date") == "" {
			t.Errorf("GET %s: Server %q, Date %q", c.path, resp.Header.Get("Server"), resp.Header.Get("Date"))
		}
	}
}
