package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/oasdiff/yaml"

	"github.com/weftdev/weft/api"
	"github.com/weftdev/weft/api/reference"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// generated is api/openapi.yaml decoded from JSON (as a client reads
// /openapi.json).
func generated(t *testing.T) map[string]any {
	t.Helper()
	js, err := yaml.YAMLToJSON(api.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// GET /openapi.json is the document /openapi.yaml is, as JSON; an
// embedder's EditOpenAPI changes both. GET /docs and its files are served
// from the binary, without a credential even with auth on (the document
// they load needs one), under a Content-Security-Policy of this origin
// only; an unknown file under /docs/ is a 404.
func TestOpenAPIDocumentAndDocs(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	plain := servertest.StartWith(t, dsn, nil)

	t.Run("json is the yaml", func(t *testing.T) {
		r := plain.Must(http.StatusOK, "GET", "/openapi.json", nil)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		var doc map[string]any
		r.JSON(t, &doc)
		if !reflect.DeepEqual(doc, generated(t)) {
			t.Error("/openapi.json is not api/openapi.yaml")
		}
		if y := plain.Must(http.StatusOK, "GET", "/openapi.yaml", nil); !bytes.Equal(y.Body, api.OpenAPI) {
			t.Error("/openapi.yaml is not api/openapi.yaml")
		}
	})

	t.Run("docs", func(t *testing.T) {
		page := plain.Must(http.StatusOK, "GET", "/docs", nil)
		if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("/docs Content-Type %q", ct)
		}
		if csp := page.Header.Get("Content-Security-Policy"); csp != reference.CSP {
			t.Errorf("/docs CSP %q", csp)
		}
		for _, src := range []string{"/docs/swagger-ui-bundle.js", "/docs/docs.js", "/docs/swagger-ui.css", "/docs/docs.css"} {
			if !bytes.Contains(page.Body, []byte(`"`+src[1:]+`"`)) { // relative: a mount prefix works
				t.Errorf("/docs does not load %s", src)
			}
			f := plain.Must(http.StatusOK, "GET", src, nil)
			if len(f.Body) < 100 || !strings.Contains(f.Header.Get("Content-Type"), map[bool]string{true: "javascript", false: "css"}[strings.HasSuffix(src, ".js")]) {
				t.Errorf("%s: %d bytes, %s", src, len(f.Body), f.Header.Get("Content-Type"))
			}
		}
		if !bytes.Contains(plain.Must(http.StatusOK, "GET", "/docs/docs.js", nil).Body, []byte(`"openapi.json"`)) {
			t.Error("the page does not render /openapi.json")
		}
		plain.Must(http.StatusNotFound, "GET", "/docs/nope.js", nil)
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		if res, err := noRedirect.Get(plain.URL + "/docs/"); err != nil || res.StatusCode != http.StatusMovedPermanently ||
			res.Header.Get("Location") != "../docs" {
			t.Errorf("/docs/: %v %v, want a redirect to the page", res, err)
		}
		req, _ := http.NewRequest("GET", plain.URL+"/docs", nil)
		req.Header.Set("If-None-Match", page.Header.Get("ETag"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("/docs with its ETag: %d, want 304", res.StatusCode)
		}
	})

	t.Run("edited, auth on", func(t *testing.T) {
		keyed := servertest.StartWith(t, dsn, func(c *server.Config) {
			c.Authenticate = func(r *http.Request) (auth.Principal, error) {
				if r.Header.Get("x-api-key") != "k" {
					return auth.Principal{}, auth.Unauthorized("no key")
				}
				return auth.Principal{Identity: "test", Scopes: []string{auth.ScopeTenant}}, nil
			}
			c.EditOpenAPI = func(_ context.Context, doc map[string]any) error {
				doc["info"].(map[string]any)["title"] = "Edited"
				return nil
			}
		})
		keyed.Must(http.StatusOK, "GET", "/docs", nil)
		keyed.Must(http.StatusOK, "GET", "/docs/swagger-ui-bundle.js", nil)
		keyed.Must(http.StatusUnauthorized, "GET", "/openapi.json", nil)
		keyed.Must(http.StatusUnauthorized, "GET", "/openapi.yaml", nil)
		get := func(path string) []byte {
			req, _ := http.NewRequest("GET", keyed.URL+path, nil)
			req.Header.Set("x-api-key", "k")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var b bytes.Buffer
			_, _ = b.ReadFrom(res.Body)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, res.StatusCode, b.Bytes())
			}
			return b.Bytes()
		}
		var doc map[string]any
		if err := json.Unmarshal(get("/openapi.json"), &doc); err != nil {
			t.Fatal(err)
		}
		want := generated(t)
		want["info"].(map[string]any)["title"] = "Edited"
		if !reflect.DeepEqual(doc, want) {
			t.Errorf("edited /openapi.json: info %v", doc["info"])
		}
		js, err := yaml.YAMLToJSON(get("/openapi.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var fromYAML map[string]any
		if err := json.Unmarshal(js, &fromYAML); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromYAML, want) {
			t.Errorf("edited /openapi.yaml: info %v", fromYAML["info"])
		}
	})
}
