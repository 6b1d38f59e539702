package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/weftdev/weft/internal/httpx"
)

// Security is the browser-facing policy of the API: which web origins may
// call it (CORS) and which Host names a request that arrives on a loopback
// address may carry (DNS-rebinding protection). The zero value is the safe
// default for a developer's machine: only pages served from localhost,
// 127.0.0.1 or [::1] (any port, http or https) may call the API from a
// browser, and a request that reaches the server through a loopback address
// must name a loopback host.
type Security struct {
	// CORSOrigins are web origins allowed besides the loopback ones, as
	// scheme://host[:port] ("https://app.example.com"). "*" allows every
	// origin, answered with Access-Control-Allow-Origin: * and never with
	// credentials.
	CORSOrigins []string
	// AllowedHosts are Host names (without port) accepted on loopback
	// connections besides localhost, *.localhost, 127.x.x.x and [::1] —
	// for a reverse proxy on the same machine that keeps the public Host.
	// "*" turns the Host check off.
	AllowedHosts []string
}

// corsExposed are the response headers browsers may read: the SDKs read
// Content-Location (useStream learns the run id from it) and the pagination
// headers (reference API §1.1).
const corsExposed = "Content-Location, Location, X-Pagination-Total, X-Pagination-Next, X-Request-Id"

// corsAllowHeaders answer a preflight that does not list its headers.
var corsAllowHeaders = strings.Join([]string{"Content-Type", "Authorization",
	"X-Api-Key", "Last-Event-ID", "X-Auth-Scheme", "X-Request-Id"}, ", ")

// Handler is the middleware enforcing s: it refuses (403) requests on a
// loopback connection whose Host is not a loopback name, and adds CORS
// headers for allowed origins only. A disallowed Origin gets no CORS
// headers (the browser then withholds the response) but the request itself
// is served: non-browser clients are not affected.
func (s Security) Handler(next http.Handler) http.Handler {
	anyOrigin, anyHost := false, false
	origins := map[string]bool{}
	for _, o := range s.CORSOrigins {
		o = strings.TrimSpace(o)
		switch {
		case o == "*":
			anyOrigin = true
		case o != "":
			origins[normalizeOrigin(o)] = true
		}
	}
	hosts := map[string]bool{}
	for _, h := range s.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "*":
			anyHost = true
		case h != "":
			hosts[strings.Trim(h, "[]")] = true
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !anyHost && onLoopback(r) && !hostAllowed(r.Host, hosts) {
			httpx.WriteJSON(w, http.StatusForbidden, httpx.ErrorBody{Detail: "Forbidden: Host " + quoteHost(r.Host) +
				" is not a loopback name and this request arrived on a loopback address (DNS rebinding protection);" +
				" call the server as localhost or 127.0.0.1, or allow the host with -allowed-hosts (WEFT_ALLOWED_HOSTS)"})
			return
		}
		h := w.Header()
		allowed := false
		if origin := r.Header.Get("Origin"); origin != "" {
			switch {
			case anyOrigin:
				h.Set("Access-Control-Allow-Origin", "*")
				allowed = true
			case loopbackOrigin(origin) || origins[normalizeOrigin(origin)]:
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Allow-Credentials", "true")
				allowed = true
			}
		}
		if !anyOrigin {
			h.Add("Vary", "Origin")
		}
		if allowed {
			h.Set("Access-Control-Expose-Headers", corsExposed)
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if allowed {
				h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS")
				if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
					h.Set("Access-Control-Allow-Headers", req)
				} else {
					h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				}
				h.Set("Access-Control-Max-Age", "600")
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originGuard refuses (403) a request whose Origin this policy does not
// allow, where CORS alone is not enough: the MCP transport must check
// Origin itself (a simple POST from any page reaches the server whatever
// its CORS answer says). A request without Origin (not from a browser)
// passes.
func (s Security) originGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !s.allowsOrigin(origin) {
			httpx.WriteJSON(w, http.StatusForbidden, httpx.ErrorBody{Detail: "Forbidden: Origin " + strconv.Quote(origin) +
				" is not allowed; allow it with -cors-origins (WEFT_CORS_ORIGINS)"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// allowsOrigin tells whether origin is a loopback one or one of CORSOrigins.
func (s Security) allowsOrigin(origin string) bool {
	if loopbackOrigin(origin) {
		return true
	}
	for _, o := range s.CORSOrigins {
		if o = strings.TrimSpace(o); o == "*" || (o != "" && normalizeOrigin(o) == normalizeOrigin(origin)) {
			return true
		}
	}
	return false
}

// onLoopback tells whether r arrived on a loopback address of this server
// (always so for a server bound to 127.0.0.1 or ::1; for a wildcard bind,
// when the client connected through loopback — the address a rebound DNS
// name points a browser at).
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostAllowed tells whether the Host header names this machine by a
// loopback name (any port) or one of the configured hosts. An empty Host
// (HTTP/1.0 clients) is allowed: browsers always send one.
func hostAllowed(hostport string, extra map[string]bool) bool {
	if hostport == "" {
		return true
	}
	host := strings.ToLower(hostport)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return loopbackName(host) || extra[host]
}

// loopbackName: localhost, a name under .localhost (RFC 6761: browsers
// resolve those to loopback themselves), or a loopback IP literal.
func loopbackName(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackOrigin tells whether origin is an http(s) page served from a
// loopback name, on any port.
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return loopbackName(strings.TrimSuffix(strings.ToLower(u.Hostname()), "."))
}

// normalizeOrigin lower-cases an origin and drops a trailing slash, so
// configured origins match what browsers send.
func normalizeOrigin(o string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
}

// quoteHost quotes a Host header for an error message, bounded in length.
func quoteHost(h string) string {
	if len(h) > 100 {
		h = h[:100] + "…"
	}
	return "\"" + strings.ToValidUTF8(h, "?") + "\""
}
