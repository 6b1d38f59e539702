package httpapi_test

import (
	"io"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/httpapi"
)

// http.cors with wildcards, as Starlette's CORSMiddleware answers them:
// "*" without credentials is answered "*"; with credentials the origin is
// named; allow_headers "*" echoes what a preflight asks for; a preflight
// not allowed names every reason.
func TestCORSPolicyWildcards(t *testing.T) {
	t.Parallel()
	age := 0
	open := serve(t, httpapi.Security{CORS: &httpapi.CORSPolicy{AllowOrigins: []string{"*"}, AllowMethods: []string{"*"},
		AllowHeaders: []string{"*"}, MaxAge: &age}})
	r := call(t, "OPTIONS", open, "", map[string]string{"Origin": "https://any.example", "Access-Control-Request-Method": "QUERY",
		"Access-Control-Request-Headers": "x-a, x-b"})
	if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Allow-Headers") != "x-a, x-b" ||
		r.Header.Get("Access-Control-Allow-Methods") != "DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT, QUERY" ||
		r.Header.Get("Access-Control-Max-Age") != "0" || r.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("open preflight: %d %v", r.StatusCode, r.Header)
	}
	r = call(t, "GET", open, "", map[string]string{"Origin": "https://any.example"})
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || r.Header.Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("open answer: %v", r.Header)
	}

	creds := serve(t, httpapi.Security{CORS: &httpapi.CORSPolicy{AllowOrigins: []string{"*"}, AllowCredentials: true}})
	r = call(t, "GET", creds, "", map[string]string{"Origin": "https://any.example"})
	if r.Header.Get("Access-Control-Allow-Origin") != "https://any.example" || r.Header.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(r.Header.Get("Vary"), "Origin") {
		t.Errorf("* with credentials: %v, want the origin named", r.Header)
	}
	r = call(t, "OPTIONS", creds, "", map[string]string{"Origin": "https://any.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "x-a"})
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 400 || string(body) != "Disallowed CORS method, headers" || r.Header.Get("Access-Control-Allow-Origin") != "https://any.example" {
		t.Errorf("preflight asking for more than GET and the safelisted headers: %d %q %v", r.StatusCode, body, r.Header)
	}
	// A request without Origin is served untouched but for Vary.
	r = call(t, "GET", creds, "", nil)
	if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no Origin: %d %v", r.StatusCode, r.Header)
	}
}

// CORSPolicy.Check refuses what cannot work, naming the key.
func TestCORSPolicyCheck(t *testing.T) {
	t.Parallel()
	neg := -5
	for _, c := range []struct {
		p    httpapi.CORSPolicy
		want string
	}{
		{httpapi.CORSPolicy{AllowOrigins: []string{"https://a.example/"}}, "allow_origins"},
		{httpapi.CORSPolicy{AllowOrigins: []string{"a.example"}}, "allow_origins"},
		{httpapi.CORSPolicy{AllowOriginRegex: `(?=x)`}, "allow_origin_regex"},
		{httpapi.CORSPolicy{AllowMethods: []string{""}}, "allow_methods"},
		{httpapi.CORSPolicy{AllowHeaders: []string{"x a"}}, "allow_headers"},
		{httpapi.CORSPolicy{ExposeHeaders: []string{"x:y"}}, "expose_headers"},
		{httpapi.CORSPolicy{MaxAge: &neg}, "max_age"},
	} {
		if err := c.p.Check(); err == nil || !strings.HasPrefix(err.Error(), c.want+":") {
			t.Errorf("%+v: %v, want an error about %s", c.p, err, c.want)
		}
	}
	ok := httpapi.CORSPolicy{AllowOrigins: []string{"*", "http://localhost:3000"}, AllowOriginRegex: `https://.*\.example\.com`,
		AllowMethods: []string{"*"}, AllowHeaders: []string{"*", "x-api-key"}}
	if err := ok.Check(); err != nil {
		t.Errorf("a good policy: %v", err)
	}
}
