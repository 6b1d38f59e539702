// Package web serves Weft's embedded UI. Files are served from memory with
// a content-hash ETag (so a reload costs a 304) and long-lived immutable
// caching for everything but the HTML entry page.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed static
var files embed.FS

type asset struct {
	body []byte
	etag string
	ct   string
}

var (
	once   sync.Once
	assets map[string]asset
)

func load() {
	assets = map[string]asset{}
	sub, _ := fs.Sub(files, "static")
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		assets[p] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ct: ct}
		return nil
	})
}

// Handler serves "/" (the UI entry page) and "/ui/<file>" (its assets).
func Handler() http.Handler {
	once.Do(load)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/ui"), "/")
		if name == "" {
			name = "index.html"
		}
		a, ok := assets[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.ct)
		w.Header().Set("ETag", a.etag)
		if name == "index.html" {
			w.Header().Set("Cache-Control", "no-cache")
		} else {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		if r.Header.Get("If-None-Match") == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		_, _ = w.Write(a.body)
	})
}
