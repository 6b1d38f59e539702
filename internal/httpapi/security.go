package httpapi

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
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
	// CORS, when set, is the whole CORS policy instead of the loopback
	// origins and CORSOrigins (langgraph.json's http.cors; see CORSPolicy).
	CORS *CORSPolicy
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
	if s.CORS != nil {
		return s.hostCheck(s.CORS.handler(next))
	}
	anyOrigin := false
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
	anyHost, hosts := s.hosts()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !anyHost && onLoopback(r) && !hostAllowed(r.Host, hosts) {
			refuseHost(w, r)
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
				if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
					// Private Network Access: a page of an allowed origin served
					// from a public address may call this local server.
					h.Set("Access-Control-Allow-Private-Network", "true")
				}
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hosts are the AllowedHosts as a set (any: "*", the check is off).
func (s Security) hosts() (any bool, hosts map[string]bool) {
	hosts = map[string]bool{}
	for _, h := range s.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "*":
			any = true
		case h != "":
			hosts[strings.Trim(h, "[]")] = true
		}
	}
	return any, hosts
}

// hostCheck is the Host check of Handler alone (DNS-rebinding protection).
func (s Security) hostCheck(next http.Handler) http.Handler {
	anyHost, hosts := s.hosts()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !anyHost && onLoopback(r) && !hostAllowed(r.Host, hosts) {
			refuseHost(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseHost answers 403 to a request on a loopback address naming another host.
func refuseHost(w http.ResponseWriter, r *http.Request) {
	httpx.WriteJSON(w, http.StatusForbidden, httpx.ErrorBody{Detail: "Forbidden: Host " + quoteHost(r.Host) +
		" is not a loopback name and this request arrived on a loopback address (DNS rebinding protection);" +
		" call the server as localhost or 127.0.0.1, or allow the host with -allowed-hosts (WEFT_ALLOWED_HOSTS)"})
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

// allowsOrigin tells whether origin is a loopback one or one of CORSOrigins
// (with CORS set: whether that policy allows it).
func (s Security) allowsOrigin(origin string) bool {
	if s.CORS != nil {
		return s.CORS.allows(origin)
	}
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

// CORSPolicy is langgraph.json's http.cors: when set, it is the whole CORS
// policy, applied as LangGraph's Python server applies it (Starlette's
// CORSMiddleware), so a frontend written against that server gets the
// same answers here:
//
//   - AllowOrigins: the origins allowed (exact, as browsers send them);
//     "*" allows every origin. Unset: -cors-origins (WEFT_CORS_ORIGINS)
//     when given, else "*" (LangGraph's CORS_ALLOW_ORIGINS default).
//   - AllowOriginRegex: an origin matching it whole is allowed too (RE2
//     syntax: Go's regexp).
//   - AllowMethods: the methods a preflight may ask for (default GET; "*":
//     every method).
//   - AllowHeaders: the request headers a preflight may ask for, besides
//     the CORS-safelisted Accept, Accept-Language, Content-Language and
//     Content-Type ("*": any).
//   - AllowCredentials: answers carry Access-Control-Allow-Credentials:
//     true and name the origin (never "*"), also with AllowOrigins "*".
//   - ExposeHeaders: the response headers a page may read (default none:
//     list Content-Location and X-Pagination-Total for the SDKs' useStream
//     and pagination).
//   - MaxAge: how long a browser caches a preflight, in seconds (default
//     600).
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered 200 "OK", or 400 "Disallowed CORS origin, method, headers"
// naming what the policy refuses, without reaching a route. Other requests
// are served whatever their Origin; only an allowed one gets
// Access-Control-Allow-Origin. Unlike Starlette, a preflight of an allowed
// origin asking for Private Network Access gets
// Access-Control-Allow-Private-Network: true (docs/frontends.md).
type CORSPolicy struct {
	AllowOrigins     []string `json:"allow_origins"`
	AllowMethods     []string `json:"allow_methods"`
	AllowHeaders     []string `json:"allow_headers"`
	AllowCredentials bool     `json:"allow_credentials"`
	AllowOriginRegex string   `json:"allow_origin_regex"`
	ExposeHeaders    []string `json:"expose_headers"`
	MaxAge           *int     `json:"max_age"`
}

// corsAllMethods are the methods "*" in AllowMethods stands for (Starlette's list).
var corsAllMethods = []string{"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY"}

// corsSafelisted are the request headers every preflight may ask for.
var corsSafelisted = []string{"Accept", "Accept-Language", "Content-Language", "Content-Type"}

// Check refuses what the policy cannot mean, naming the key (under
// http.cors) and why: an origin that is not "*" nor scheme://host[:port]
// (a browser's Origin never has a path or a trailing slash, so it would
// never match), a regular expression Go cannot compile, an empty or
// malformed method or header name, a negative max_age.
func (p *CORSPolicy) Check() error {
	for _, o := range p.AllowOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
			strings.HasSuffix(o, "/") {
			return fmt.Errorf("allow_origins: %q must be \"*\" or an origin, scheme://host[:port] without a path or a trailing slash", o)
		}
	}
	if p.AllowOriginRegex != "" {
		if _, err := regexp.Compile(p.AllowOriginRegex); err != nil {
			return fmt.Errorf("allow_origin_regex: %q is not a regular expression Weft can use (Go's RE2 syntax: no lookaround, no backreferences): %w",
				p.AllowOriginRegex, err)
		}
	}
	for _, m := range p.AllowMethods {
		if m != "*" && !httpToken(m) {
			return fmt.Errorf("allow_methods: %q is not an HTTP method", m)
		}
	}
	for key, names := range map[string][]string{"allow_headers": p.AllowHeaders, "expose_headers": p.ExposeHeaders} {
		for _, h := range names {
			if h != "*" && !httpToken(h) {
				return fmt.Errorf("%s: %q is not a header name", key, h)
			}
		}
	}
	if p.MaxAge != nil && *p.MaxAge < 0 {
		return fmt.Errorf("max_age: %d must be a number of seconds >= 0", *p.MaxAge)
	}
	return nil
}

// httpToken tells whether s is an RFC 9110 token (a method or header name).
func httpToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 126 || c <= 32 || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

// allows tells whether the policy allows origin.
func (p *CORSPolicy) allows(origin string) bool {
	if slices.Contains(p.AllowOrigins, "*") || slices.Contains(p.AllowOrigins, origin) {
		return true
	}
	if p.AllowOriginRegex != "" {
		re, err := regexp.Compile(`^(?:` + p.AllowOriginRegex + `)$`)
		return err == nil && re.MatchString(origin)
	}
	return false
}

// handler applies the policy in front of next.
func (p *CORSPolicy) handler(next http.Handler) http.Handler {
	allOrigins := slices.Contains(p.AllowOrigins, "*")
	origins := map[string]bool{}
	for _, o := range p.AllowOrigins {
		origins[o] = true
	}
	var originRE *regexp.Regexp
	if p.AllowOriginRegex != "" {
		originRE = regexp.MustCompile(`^(?:` + p.AllowOriginRegex + `)$`) // Check compiled it
	}
	allowed := func(o string) bool { return allOrigins || origins[o] || (originRE != nil && originRE.MatchString(o)) }
	methods := p.AllowMethods
	if methods == nil {
		methods = []string{http.MethodGet}
	}
	if slices.Contains(methods, "*") {
		methods = corsAllMethods
	}
	allHeaders := slices.Contains(p.AllowHeaders, "*")
	headerSet := map[string]bool{}
	listed := slices.Clone(corsSafelisted)
	for _, h := range corsSafelisted {
		headerSet[strings.ToLower(h)] = true
	}
	for _, h := range p.AllowHeaders {
		headerSet[strings.ToLower(h)] = true
		if !slices.Contains(listed, h) {
			listed = append(listed, h)
		}
	}
	slices.Sort(listed)
	maxAge := 600
	if p.MaxAge != nil {
		maxAge = *p.MaxAge
	}
	// An explicit origin in preflights unless every origin is allowed
	// without credentials ("*" then).
	explicit := !allOrigins || p.AllowCredentials
	expose := strings.Join(p.ExposeHeaders, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		origin := r.Header.Get("Origin")
		if origin != "" && r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, Access-Control-Request-Private-Network")
			if !explicit {
				h.Set("Access-Control-Allow-Origin", "*")
			}
			h.Set("Access-Control-Allow-Methods", strings.Join(methods, ", "))
			h.Set("Access-Control-Max-Age", strconv.Itoa(maxAge))
			if !allHeaders {
				h.Set("Access-Control-Allow-Headers", strings.Join(listed, ", "))
			}
			if p.AllowCredentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			var failures []string
			ok := allowed(origin)
			if !ok {
				failures = append(failures, "origin")
			} else if explicit {
				h.Set("Access-Control-Allow-Origin", origin)
			}
			if !slices.Contains(methods, r.Header.Get("Access-Control-Request-Method")) {
				failures = append(failures, "method")
			}
			if req, asked := r.Header["Access-Control-Request-Headers"]; asked {
				all := strings.Join(req, ",")
				if allHeaders {
					h.Set("Access-Control-Allow-Headers", all)
				} else {
					for _, name := range strings.Split(all, ",") {
						if !headerSet[strings.TrimSpace(strings.ToLower(name))] {
							failures = append(failures, "headers")
							break
						}
					}
				}
			}
			if _, asked := r.Header["Access-Control-Request-Private-Network"]; asked {
				if ok {
					h.Set("Access-Control-Allow-Private-Network", "true")
				} else {
					failures = append(failures, "private-network")
				}
			}
			h.Set("Content-Type", "text/plain; charset=utf-8")
			if len(failures) > 0 {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, "Disallowed CORS "+strings.Join(failures, ", "))
				return
			}
			_, _ = io.WriteString(w, "OK")
			return
		}
		if origin != "" {
			if allOrigins {
				h.Set("Access-Control-Allow-Origin", "*")
			}
			if p.AllowCredentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			if expose != "" {
				h.Set("Access-Control-Expose-Headers", expose)
			}
			if (allOrigins && p.AllowCredentials) || (!allOrigins && allowed(origin)) {
				h.Set("Access-Control-Allow-Origin", origin)
			}
		}
		h.Add("Vary", "Origin")
		next.ServeHTTP(w, r)
	})
}
