// Package web serves Weft's embedded time-travel UI: plain ES modules, one
// vendored UI library file (static/vendor/preact-htm.js) and a stylesheet,
// embedded with go:embed. There is no build step: go build embeds the files
// as they are in static/.
//
// URLs and caching:
//
//	/                    index.html                        no-cache (revalidated with its ETag)
//	/ui/boot.js          the loader index.html runs        no-cache
//	/ui/favicon.svg      the icon                          no-cache
//	/ui/config.json      {"build", "assets"}               no-store
//	/ui/v/<build>/<file> every file, under a content hash  immutable, one year
//
// <build> is a hash of every embedded file's name and content, so any change
// to any file changes every asset URL and a browser never runs a stale module
// against a new one; relative imports between modules stay plain ("./api.js")
// because they resolve under the same /ui/v/<build>/ prefix. boot.js learns the
// prefix from /ui/config.json (settings are served as JSON, the HTML is never
// templated), adds the stylesheet and imports app.js. A request for another
// build's prefix is a 404: after an upgrade a page reloads instead of mixing
// versions.
//
// The page refers to everything relative to itself (ui/boot.js, the API's
// /threads as <its directory>/threads): under a mount prefix (the server at
// /api/, httpapi.Mount) the same files work unchanged.
//
// Every response of the UI carries a Content-Security-Policy that allows
// scripts, styles, images and connections from this origin only (no inline
// script or style element, nothing from another origin), plus nosniff,
// no-referrer and frame-ancestors 'none'.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
)

//go:embed static
var files embed.FS

// CSP is the Content-Security-Policy of every UI response.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

type asset struct {
	body []byte
	etag string
	ct   string
}

type bundle struct {
	assets map[string]asset
	build  string // hash of every file's name and content
	config []byte // /ui/config.json
}

var (
	once sync.Once
	b    bundle
)

func load() {
	b.assets = map[string]asset{}
	sub, _ := fs.Sub(files, "static")
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		b.assets[p] = asset{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ct: ct}
		return nil
	})
	names := make([]string, 0, len(b.assets))
	for n := range b.assets {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n + "\x00" + b.assets[n].etag + "\n"))
	}
	b.build = hex.EncodeToString(h.Sum(nil))[:16]
	var modules []string
	for _, n := range names {
		if strings.HasSuffix(n, ".js") && n != "boot.js" {
			modules = append(modules, n)
		}
	}
	b.config, _ = json.Marshal(Config{Build: b.build, Assets: "/ui/v/" + b.build + "/", Modules: modules})
}

// Config is the body of /ui/config.json.
type Config struct {
	// Build is the content hash of the embedded files.
	Build string `json:"build"`
	// Assets is the path every UI file is served under, with immutable
	// caching, from the server's root (under a mount prefix, after it).
	Assets string `json:"assets"`
	// Modules are the ES modules under Assets, which boot.js preloads in
	// parallel (instead of discovering them import by import).
	Modules []string `json:"modules"`
}

// Build returns the content hash of the embedded UI (the /ui/v/<build>/
// prefix).
func Build() string {
	once.Do(load)
	return b.build
}

// Handler serves "/" (the UI entry page) and "/ui/…" (its assets and
// config), as the package documentation describes.
func Handler() http.Handler {
	once.Do(load)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		name := strings.TrimPrefix(r.URL.Path, "/")
		immutable := false
		switch {
		case name == "":
			name = "index.html"
		case name == "ui/config.json":
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "no-store")
			_, _ = w.Write(b.config)
			return
		case strings.HasPrefix(name, "ui/v/"):
			build, file, _ := strings.Cut(strings.TrimPrefix(name, "ui/v/"), "/")
			if build != b.build {
				notFound(w)
				return
			}
			name, immutable = file, true
		default:
			name = strings.TrimPrefix(name, "ui/")
		}
		a, ok := b.assets[name]
		if !ok || name == "" {
			notFound(w)
			return
		}
		h.Set("Content-Type", a.ct)
		h.Set("ETag", a.etag)
		if immutable {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		if r.Header.Get("If-None-Match") == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(a.body)
	})
}

func notFound(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_, _ = w.Write([]byte(`{"detail":"Not Found"}` + "\n"))
}
