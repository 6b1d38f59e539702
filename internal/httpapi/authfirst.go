package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// AuthFirst is the middleware that authenticates, before what serves in
// front of the API (a project's http.app: its middleware), every request
// for one of api's routes that the API authenticates (all but the probes
// and the web UI's files), as langgraph.json's http.middleware_order
// "auth_first" orders LangGraph's server: a request refused there is
// answered as the API answers it (text: Deps.TextErrors) and never reaches
// the app. Requests for other paths (the app's own routes) pass: the app
// authenticates those itself with http.enable_custom_route_auth. api is
// NewRouter's handler; check authenticates a request at once (an
// *auth.Error refuses it).
func AuthFirst(api http.Handler, check func(*http.Request) error, log *slog.Logger, text bool) func(http.Handler) http.Handler {
	routes, _ := api.(chi.Routes)
	refuse := AuthErrorWriter(log, text)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if openPath(r.URL.Path) || (routes != nil && !apiRoute(routes, r)) {
				next.ServeHTTP(w, r)
				return
			}
			if err := check(r); err != nil {
				refuse(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// apiRoute tells whether one of the router's routes serves r's path (with
// any method).
func apiRoute(routes chi.Routes, r *http.Request) bool {
	pattern, _ := resource(routes, r)
	return pattern != ""
}
