package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/weftdev/weft/internal/httpx"
)

// CheckMountPrefix refuses a mount prefix LangGraph's server refuses: it
// must start with "/", must not end with one, and /noauth is reserved (the
// SDK's loopback requests); "" is none.
func CheckMountPrefix(prefix string) error {
	switch {
	case prefix == "":
		return nil
	case !strings.HasPrefix(prefix, "/"):
		return errors.New("must start with \"/\" (/api, /v1, /api/v1)")
	case strings.HasSuffix(prefix, "/"):
		return errors.New("must not end with \"/\" (/api, not /api/)")
	case prefix == "/noauth" || strings.HasPrefix(prefix, "/noauth/"):
		return errors.New("/noauth is reserved (LangGraph's SDK loopback requests)")
	case strings.ContainsAny(prefix, "?#%{}*") || strings.Contains(prefix, "//"):
		return errors.New("must be a plain path (letters, digits, - . _ ~ between single slashes)")
	}
	return nil
}

// Mount serves h under prefix (CheckMountPrefix), as LangGraph's server
// mounts its routes under http.mount_prefix: a request for prefix+"/x" is
// h's request for "/x"; prefix alone is redirected (307) to prefix+"/";
// outside the prefix only the probes stay where load balancers look for
// them — GET / and /ok (h's /ok), /livez and /metrics — and every other
// path is a 404. An empty prefix is h itself.
func Mount(prefix string, h http.Handler) http.Handler {
	if prefix == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		rest, under := strings.CutPrefix(path, prefix)
		switch {
		case under && rest == "":
			u := *r.URL
			u.Path, u.RawPath = prefix+"/", ""
			http.Redirect(w, r, u.RequestURI(), http.StatusTemporaryRedirect)
		case under && strings.HasPrefix(rest, "/"):
			r2 := r.Clone(r.Context())
			r2.URL.Path = rest
			if r.URL.RawPath != "" {
				r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, prefix)
			}
			r2.RequestURI = r2.URL.RequestURI()
			h.ServeHTTP(w, r2)
		case path == "/":
			r2 := r.Clone(r.Context())
			r2.URL.Path, r2.URL.RawPath = "/ok", ""
			r2.RequestURI = r2.URL.RequestURI()
			h.ServeHTTP(w, r2)
		case path == "/ok" || path == "/livez" || path == "/metrics":
			h.ServeHTTP(w, r)
		default:
			httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Not Found"})
		}
	})
}
