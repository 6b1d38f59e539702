// Package reference is the API reference page Weft serves at GET /docs:
// swagger-ui (vendor/, vendored unchanged from the npm package
// swagger-ui-dist; README.md says which version and how to update it)
// rendering the server's own OpenAPI document, GET /openapi.json. Every
// file is embedded in the binary: the page loads nothing from another
// origin, and works offline.
//
//	/docs                          index.html (its URLs are relative: a mount prefix works)
//	/docs/docs.js, /docs/docs.css  the page's own script and style
//	/docs/swagger-ui-bundle.js     vendor/
//	/docs/swagger-ui.css           vendor/
//
// Responses are revalidated (no-cache, with an ETag of the content) and
// carry a Content-Security-Policy that allows this origin only.
package reference

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed index.html docs.js docs.css vendor/swagger-ui-bundle.js vendor/swagger-ui.css
var files embed.FS

// CSP is the Content-Security-Policy of every response of the page: this
// origin only (data: images are swagger-ui's icons, inline style
// attributes its layout).
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type asset struct {
	body []byte
	etag string
	ct   string
}

var contentTypes = map[string]string{".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
	".js": "text/javascript; charset=utf-8"}

// assets are the files by their URL path.
var assets = func() map[string]asset {
	out := map[string]asset{}
	add := func(url, name string) {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		sum := sha256.Sum256(b)
		out[url] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ct: contentTypes[path.Ext(name)]}
	}
	add("/docs", "index.html")
	add("/docs/docs.js", "docs.js")
	add("/docs/docs.css", "docs.css")
	add("/docs/swagger-ui-bundle.js", "vendor/swagger-ui-bundle.js")
	add("/docs/swagger-ui.css", "vendor/swagger-ui.css")
	return out
}()

// Handler serves the page and its files (GET and HEAD); /docs/ redirects
// to the page (its relative URLs resolve from /docs); any other path under
// /docs/ is a 404.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/docs/" {
			// Relative, as written (http.Redirect would make it /docs): under a mount prefix too.
			w.Header().Set("Location", "../docs")
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		a, ok := assets[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"detail":"Not Found"}`))
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		h.Set("Content-Type", a.ct)
		if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(a.body)
	})
}
