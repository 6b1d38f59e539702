package web

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, path string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, req)
	return rec
}

// The entry page and its loader are revalidated; every asset is served
// under the build's content hash with immutable caching; another build's
// prefix is a 404; every response carries the CSP.
func TestCaching(t *testing.T) {
	idx := get(t, "/", nil)
	if idx.Code != 200 || idx.Header().Get("Cache-Control") != "no-cache" || !strings.Contains(idx.Body.String(), `src="ui/boot.js"`) {
		t.Fatalf("index: %d %v", idx.Code, idx.Header())
	}
	if got := get(t, "/", map[string]string{"If-None-Match": idx.Header().Get("ETag")}); got.Code != http.StatusNotModified {
		t.Fatalf("revalidated index: %d", got.Code)
	}
	cfg := get(t, "/ui/config.json", nil)
	var c Config
	if err := json.Unmarshal(cfg.Body.Bytes(), &c); err != nil || cfg.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("config: %v %s %v", err, cfg.Body, cfg.Header())
	}
	if c.Build != Build() || c.Assets != "/ui/v/"+Build()+"/" || len(c.Modules) < 5 {
		t.Fatalf("config %+v", c)
	}
	app := get(t, c.Assets+"app.js", nil)
	if app.Code != 200 || app.Header().Get("Cache-Control") != "public, max-age=31536000, immutable" || !strings.Contains(app.Header().Get("Content-Type"), "javascript") {
		t.Fatalf("app.js: %d %v", app.Code, app.Header())
	}
	for _, p := range []string{"/ui/v/0123456789abcdef/app.js", c.Assets + "nope.js", c.Assets, "/ui/nope"} {
		if got := get(t, p, nil); got.Code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, got.Code)
		}
	}
	for _, p := range []string{"/", "/ui/boot.js", "/ui/favicon.svg", c.Assets + "style.css", "/ui/config.json", "/ui/v/x/y"} {
		h := get(t, p, nil).Header()
		if h.Get("Content-Security-Policy") != CSP || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", p, h)
		}
	}
	if strings.Contains(CSP, "unsafe-inline") || strings.Contains(CSP, "unsafe-eval") || !strings.Contains(CSP, "script-src 'self'") {
		t.Errorf("CSP %q", CSP)
	}
}

var importRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"|import\("([^"]+)"\)`)

// Every relative import of every module names an embedded file, the HTML
// has no inline script or style, and the modules reach no other origin.
func TestModules(t *testing.T) {
	sub, _ := fs.Sub(files, "static")
	Build()
	imports := 0
	for name, a := range b.assets {
		body := string(a.body)
		switch {
		case strings.HasSuffix(name, ".html"):
			if regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`).MatchString(body) || strings.Contains(body, "<style") || strings.Contains(body, " style=") {
				t.Errorf("%s has an inline script or style", name)
			}
		case strings.HasSuffix(name, ".js") && !strings.HasPrefix(name, "vendor/"):
			for _, m := range importRE.FindAllStringSubmatch(body, -1) {
				spec := m[1] + m[2]
				imports++
				if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
					t.Errorf("%s imports %q: only relative imports of embedded files", name, spec)
					continue
				}
				dir := name[:strings.LastIndex(name, "/")+1]
				target := cleanJoin(dir, spec)
				if _, err := fs.Stat(sub, target); err != nil {
					t.Errorf("%s imports %q: no embedded file %s", name, spec, target)
				}
			}
			if regexp.MustCompile(`https?://`).MatchString(body) {
				t.Errorf("%s names another origin", name)
			}
		}
	}
	if imports < 30 {
		t.Errorf("found only %d imports: the pattern no longer matches the modules", imports)
	}
}

func cleanJoin(dir, spec string) string {
	parts := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	if dir == "" {
		parts = nil
	}
	for _, p := range strings.Split(spec, "/") {
		switch p {
		case ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}
