// Package projecthttp puts a project's langgraph.json "http.app" (custom
// routes and middleware) and "ui" (generative UI components) in front of
// Weft's API, as LangGraph's server mounts them: a worker serves them on a
// unix socket (worker-js/src/http-app.mjs, worker-py/weft_worker/http_app.py)
// and Front proxies requests there.
//
// With an http.app, every request but the worker API (/dispatch/…), the
// health probes (/ok, /livez) and WebSocket upgrades goes to the app first; what the app passes on
// comes back to this server with the pass header and is served by the API
// (after the app's middleware had its say on the way in and on the way
// out). The ui's requests, POST /ui/{graph} and GET /ui/{graph}/{file} of
// the config's ui graphs, go to the worker that bundled the ui (the JS
// worker: the app's socket when the app is JS too, UISocket when it is
// Python's); the web UI's own /ui/ paths stay the server's (or the app's).
//
// With http.enable_custom_route_auth, the worker asks this server to
// authenticate a request one of the app's routes answers, before the route
// runs: it sends the request's method, URL and headers back with the pass
// and AuthenticateHeader, and Front answers the user (200, JSON) or the
// API's own answer to a request that failed authentication, which the
// worker relays to the client.
package projecthttp

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"

	"github.com/weftdev/weft/internal/httpx"
)

// PassHeader carries the pass of a request the app passed on to the API.
const PassHeader = "X-Weft-App-Pass"

// AuthenticateHeader, on a request with the pass, asks for the
// authentication of the request it describes (a request to one of the
// app's routes) instead of passing it on to the API.
const AuthenticateHeader = "X-Weft-App-Authenticate"

// HostHeader, on an authentication request, is the Host the client called
// (a worker's HTTP client cannot send it as Host).
const HostHeader = "X-Weft-App-Host"

// Config is what langgraph.json asks for.
type Config struct {
	// Socket is where a worker serves the app (and the ui, when UISocket
	// is "").
	Socket string
	// UISocket is where the JS worker serves the ui when another worker
	// serves the app on Socket (a Python http.app); "": Socket.
	UISocket string
	// App: langgraph.json names an http.app.
	App bool
	// UIGraphs are the keys of langgraph.json's ui.
	UIGraphs []string
	// Authenticate authenticates, as the API authenticates its own
	// requests (auth.path), a ui component's request (POST /ui/{graph})
	// and a request to one of the app's routes the worker asks about
	// (http.enable_custom_route_auth): the user it answers is JSON-encoded
	// for the worker. nil: neither is authenticated.
	Authenticate func(r *http.Request) (any, error)
	// AuthError writes a failed authentication's answer as the API writes
	// it (its status, {"detail"} or plain text). Needed with Authenticate.
	AuthError func(w http.ResponseWriter, r *http.Request, err error)
}

// Front proxies requests to the project's app and ui.
type Front struct {
	cfg      Config
	ui       map[string]bool
	pass     string
	appProxy *httputil.ReverseProxy // to Socket
	uiProxy  *httputil.ReverseProxy // to UISocket, else Socket
	log      *slog.Logger
}

// New is a Front of cfg with a fresh pass (Pass gives it to the workers).
func New(cfg Config, log *slog.Logger) (*Front, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	f := &Front{cfg: cfg, ui: map[string]bool{}, pass: hex.EncodeToString(b), log: log}
	for _, g := range cfg.UIGraphs {
		f.ui[g] = true
	}
	f.appProxy = f.proxy(cfg.Socket, "The project's http.app is not served yet (its worker is starting)")
	f.uiProxy = f.appProxy
	if cfg.UISocket != "" {
		f.uiProxy = f.proxy(cfg.UISocket, "The project's ui is not served yet (the JS worker is starting)")
	}
	return f, nil
}

// proxy is a reverse proxy to a worker's socket.
func (f *Front) proxy(socket, starting string) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport:     httpx.UnixTransport(socket, 256),
		FlushInterval: -1, // streams go through as they are written
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "app"
			pr.Out.Host = pr.In.Host // the app sees the address its client called
			// Only a worker sends these, and only to this server.
			pr.Out.Header.Del(PassHeader)
			pr.Out.Header.Del(AuthenticateHeader)
			pr.Out.Header.Del(HostHeader)
		},
		// The server's CORS answer (guard) stands: the API's, on a request
		// the app passed on, would repeat it.
		ModifyResponse: func(res *http.Response) error {
			for k := range res.Header {
				if strings.HasPrefix(k, "Access-Control-") {
					res.Header.Del(k)
				}
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client left
			}
			f.log.Warn("project http.app unreachable", "method", r.Method, "path", r.URL.Path, "error", err)
			httpx.WriteUnavailable(w, starting)
		},
	}
}

// Pass is the secret with which the workers pass requests on to the API.
func (f *Front) Pass() string { return f.pass }

// Wrap is api with the project's app and ui in front of it; guard (the
// server's Host and CORS policy) goes before the app too.
func (f *Front) Wrap(api http.Handler, guard func(http.Handler) http.Handler) http.Handler {
	app, ui := guard(f.appProxy), guard(f.uiProxy)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pass := r.Header.Get(PassHeader); pass != "" {
			if subtle.ConstantTimeCompare([]byte(pass), []byte(f.pass)) == 1 {
				r.Header.Del(PassHeader)
				if r.Header.Get(AuthenticateHeader) != "" {
					f.authenticate(w, r) // a request to one of the app's routes
					return
				}
				api.ServeHTTP(w, r) // passed on by the app
				return
			}
			httpx.WriteJSON(w, http.StatusForbidden, httpx.ErrorBody{Detail: "Forbidden: wrong " + PassHeader})
			return
		}
		switch f.target(r) {
		case toUI:
			if r.Method == http.MethodPost && f.cfg.Authenticate != nil {
				// A component, as the API's own routes: authenticated first.
				if _, err := f.cfg.Authenticate(r); err != nil {
					f.cfg.AuthError(w, r, err)
					return
				}
			}
			ui.ServeHTTP(w, r)
		case toApp:
			app.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// authenticate answers a worker's authentication request: 200 and the
// user, or the API's answer to a request that failed authentication.
func (f *Front) authenticate(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(AuthenticateHeader)
	if h := r.Header.Get(HostHeader); h != "" {
		r.Host = h
		r.Header.Del(HostHeader)
	}
	if f.cfg.Authenticate == nil {
		httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "this server does not authenticate the project's custom routes"})
		return
	}
	who, err := f.cfg.Authenticate(r)
	if err != nil {
		f.cfg.AuthError(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, who)
}

// target is where a request goes.
type target int

const (
	toAPI target = iota
	toApp
	toUI
)

// target tells where r goes: the ui's worker, the app's, or the API.
func (f *Front) target(r *http.Request) target {
	p := r.URL.Path
	if strings.HasPrefix(p, "/dispatch/") || p == "/ok" || p == "/livez" {
		return toAPI
	}
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return toAPI // a WebSocket (protocol v2's transport) is the API's: the app cannot pass an upgrade on
	}
	if rest, ok := strings.CutPrefix(p, "/ui/"); ok && len(f.ui) > 0 {
		graph, file, nested := strings.Cut(rest, "/")
		switch {
		case r.Method == http.MethodPost && !nested:
			return toUI // a ui graph's component, or a 404 for another name
		case (r.Method == http.MethodGet || r.Method == http.MethodHead) && nested && f.ui[graph] && file != "":
			return toUI
		}
	}
	if f.cfg.App {
		return toApp
	}
	return toAPI
}
