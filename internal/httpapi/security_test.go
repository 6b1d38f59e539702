package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/httpapi"
)

// serve runs sec in front of a handler answering 200 "ok", on 127.0.0.1.
func serve(t *testing.T, sec httpapi.Security) string {
	t.Helper()
	srv := httptest.NewServer(sec.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Location", "/x")
		_, _ = io.WriteString(w, `"ok"`)
	})))
	t.Cleanup(srv.Close)
	return srv.URL
}

func call(t *testing.T, method, url, host string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestCORSDefaultAllowsLoopbackOriginsOnly(t *testing.T) {
	t.Parallel()
	url := serve(t, httpapi.Security{})
	for _, origin := range []string{"http://localhost:3000", "http://127.0.0.1:5173", "http://[::1]:8080",
		"https://localhost", "http://app.localhost:3000", "http://127.0.0.2"} {
		r := call(t, "GET", url, "", map[string]string{"Origin": origin})
		if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != origin ||
			r.Header.Get("Access-Control-Allow-Credentials") != "true" ||
			!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Content-Location") ||
			!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "X-Pagination-Next") {
			t.Errorf("%s: %d %v", origin, r.StatusCode, r.Header)
		}
	}
	// Other origins are served (non-browser clients may send anything) but
	// get no CORS headers, so a browser withholds the response.
	for _, origin := range []string{"https://evil.example", "http://localhost.evil.example", "null", "file://", "http://127.0.0.1.nip.io"} {
		r := call(t, "GET", url, "", map[string]string{"Origin": origin})
		if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" ||
			r.Header.Get("Access-Control-Allow-Credentials") != "" || r.Header.Get("Vary") != "Origin" {
			t.Errorf("%s: %d %v", origin, r.StatusCode, r.Header)
		}
		pre := call(t, "OPTIONS", url+"/threads", "", map[string]string{"Origin": origin, "Access-Control-Request-Method": "POST"})
		if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "" ||
			pre.Header.Get("Access-Control-Allow-Methods") != "" {
			t.Errorf("preflight %s: %d %v", origin, pre.StatusCode, pre.Header)
		}
	}
	pre := call(t, "OPTIONS", url+"/threads", "", map[string]string{"Origin": "http://localhost:3000",
		"Access-Control-Request-Method": "PATCH", "Access-Control-Request-Headers": "content-type,x-api-key,last-event-id"})
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "PATCH") ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "x-api-key") {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
}

func TestCORSConfiguredOrigins(t *testing.T) {
	t.Parallel()
	url := serve(t, httpapi.Security{CORSOrigins: []string{"https://App.Example.com/"}})
	r := call(t, "GET", url, "", map[string]string{"Origin": "https://app.example.com"})
	if r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || r.Header.Get("Access-Control-Allow-Credentials") != "true" {
		t.Errorf("configured origin: %v", r.Header)
	}
	r = call(t, "GET", url, "", map[string]string{"Origin": "https://app.example.com:8443"})
	if r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other port of a configured origin: %v", r.Header)
	}

	// "*": every origin, as *, never with credentials.
	url = serve(t, httpapi.Security{CORSOrigins: []string{"*"}})
	for _, origin := range []string{"https://anything.example", "http://localhost:3000"} {
		r := call(t, "GET", url, "", map[string]string{"Origin": origin})
		if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Allow-Credentials") != "" ||
			!strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Content-Location") {
			t.Errorf("* with %s: %v", origin, r.Header)
		}
	}
}

func TestHostCheckOnLoopback(t *testing.T) {
	t.Parallel()
	url := serve(t, httpapi.Security{})
	for _, host := range []string{"127.0.0.1:8123", "localhost:8123", "LOCALHOST", "[::1]:8123", "127.1.2.3", "localhost.", "a.localhost:1"} {
		if r := call(t, "GET", url, host, nil); r.StatusCode != 200 {
			t.Errorf("Host %s: %d", host, r.StatusCode)
		}
	}
	for _, host := range []string{"evil.example", "evil.example:8123", "192.168.1.10:8123", "localhost.evil.example", "127.0.0.1.nip.io"} {
		r := call(t, "GET", url, host, map[string]string{"Origin": "http://" + host})
		var body struct{ Detail string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.StatusCode != http.StatusForbidden ||
			!strings.Contains(body.Detail, "allowed-hosts") || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("Host %s: %d %q %v", host, r.StatusCode, body.Detail, err)
		}
	}
	// Configured hosts, and the check turned off.
	url = serve(t, httpapi.Security{AllowedHosts: []string{"weft.internal"}})
	if r := call(t, "GET", url, "weft.internal:443", nil); r.StatusCode != 200 {
		t.Errorf("allowed host: %d", r.StatusCode)
	}
	if r := call(t, "GET", url, "other.internal", nil); r.StatusCode != http.StatusForbidden {
		t.Errorf("other host: %d", r.StatusCode)
	}
	url = serve(t, httpapi.Security{AllowedHosts: []string{"*"}})
	if r := call(t, "GET", url, "evil.example", nil); r.StatusCode != 200 {
		t.Errorf("check off: %d", r.StatusCode)
	}
}
