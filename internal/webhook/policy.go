package webhook

import (
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/weftdev/weft/internal/apperr"
)

// Policy is what langgraph.json's webhooks section (weft dev) says of run
// webhooks: which URLs a run or cron may name (checked when it is created or
// patched, a 422 otherwise, and again before each delivery), and what every
// delivery carries. A nil *Policy is no such section: any absolute http(s)
// URL or path on this server is accepted, and the address guard alone
// (addr.go, AllowPrivate) decides at delivery.
type Policy struct {
	// RequireHTTPS refuses absolute URLs that are not https.
	RequireHTTPS bool
	// AllowedDomains, when not empty, are the only hosts a webhook may name:
	// "hooks.example.com" that host alone, "*.example.com" any of its
	// subdomains but not example.com itself. Lower case. A host listed
	// exactly is trusted: deliveries to it skip the address guard, as
	// LangGraph's server skips its SSRF checks for it.
	AllowedDomains []string
	// AllowedPorts, when not empty, are the only ports a webhook may use
	// (a URL without one uses 443 for https, 80 for http).
	AllowedPorts []int
	// MaxURLLength refuses longer webhooks (characters; 0: no limit).
	MaxURLLength int
	// DisableLoopback refuses paths on this server, the localhost names
	// and loopback addresses (at creation, and at delivery by the address
	// each host resolves to, whatever AllowPrivate says). False lets
	// deliveries reach loopback addresses, AllowPrivate or not.
	DisableLoopback bool
	// DisablePrivateIPs refuses the private ranges (10/8, 172.16/12,
	// 192.168/16, 100.64/10, fc00::/7), whatever AllowPrivate says.
	DisablePrivateIPs bool
	// Headers are sent with every delivery (their values resolved when the
	// policy was built); they replace a default header of the same name.
	Headers map[string]string
	// AllowedFields, when not empty, are the only fields of the POSTed run
	// (run_id, status, values, …) a delivery sends.
	AllowedFields []string
}

// WebhookFields are the fields a delivery's body has (webhookBody), those
// AllowedFields may name.
var WebhookFields = []string{"run_id", "thread_id", "assistant_id", "created_at", "updated_at", "metadata", "kwargs",
	"multitask_strategy", "status", "run_started_at", "run_ended_at", "webhook_sent_at", "values", "error"}

// The localhost names (DisableLoopback), and the hosts a policy refuses at
// creation whatever it allows (but an exactly allowed host): cloud metadata
// endpoints and Kubernetes' internal names, as LangGraph's server does.
var (
	localhostNames = []string{"localhost", "localhost.localdomain", "host.docker.internal"}
	metadataNames  = []string{"metadata.google.internal", "metadata.amazonaws.com", "metadata", "instance-data"}
	metadataAddrs  = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("169.254.170.2"),
		netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("fd00:ec2::254")}
	privateRanges = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"), netip.MustParsePrefix("fc00::/7")}
)

// Validate checks a run's (or cron's) webhook w when it is created: an
// absolute http(s) URL with a host, or a path on this server (starting with
// "/"), then what p says of it. "" is none. A refusal is apperr.Invalid
// (422) saying why. Hosts are judged by their name and, for an address
// literal, by the address; what a name resolves to is judged at delivery.
func (p *Policy) Validate(w string) error {
	if w == "" {
		return nil
	}
	if p != nil && p.MaxURLLength > 0 && len(w) > p.MaxURLLength {
		return apperr.Errorf(apperr.Invalid, "Webhook URL too long: %d characters, at most %d (webhooks.url.max_url_length)", len(w), p.MaxURLLength)
	}
	if strings.HasPrefix(w, "/") {
		if p != nil && p.DisableLoopback {
			return apperr.Errorf(apperr.Invalid, "Invalid webhook %q: webhooks that are paths on this server (loopback) are refused; set webhooks.url.disable_loopback to false in langgraph.json to allow them", w)
		}
		return nil
	}
	u, err := url.Parse(w)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return apperr.Errorf(apperr.Invalid, "Invalid webhook %q: must be an absolute http(s) URL or a path starting with /", w)
	}
	if p == nil {
		return nil
	}
	if p.RequireHTTPS && u.Scheme != "https" {
		return apperr.Errorf(apperr.Invalid, "Webhook must use https (webhooks.url.require_https)")
	}
	if len(p.AllowedPorts) > 0 {
		port := 80
		if u.Scheme == "https" {
			port = 443
		}
		if s := u.Port(); s != "" {
			if port, err = strconv.Atoi(s); err != nil {
				return apperr.Errorf(apperr.Invalid, "Invalid webhook %q: bad port", w)
			}
		}
		if !slices.Contains(p.AllowedPorts, port) {
			return apperr.Errorf(apperr.Invalid, "Webhook port %d not allowed (webhooks.url.allowed_ports)", port)
		}
	}
	host := strings.ToLower(u.Hostname())
	if len(p.AllowedDomains) > 0 && !p.domainAllowed(host) {
		return apperr.Errorf(apperr.Invalid, "Webhook domain not allowed: %s (webhooks.url.allowed_domains)", host)
	}
	if p.trusted(host) {
		return nil
	}
	if reason := p.hostRefused(host); reason != "" {
		return apperr.Errorf(apperr.Invalid, "Webhook host blocked: %s", reason)
	}
	return nil
}

// domainAllowed reports whether host matches AllowedDomains.
func (p *Policy) domainAllowed(host string) bool {
	for _, d := range p.AllowedDomains {
		if base, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+base) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}

// trusted reports whether host is listed exactly in AllowedDomains.
func (p *Policy) trusted(host string) bool {
	return p != nil && slices.Contains(p.AllowedDomains, strings.ToLower(host))
}

// hostRefused says why host (a name or address literal) may not be a
// webhook's, "" when it may: cloud metadata and cluster-internal names and
// addresses always, localhost names and loopback addresses with
// DisableLoopback, private addresses with DisablePrivateIPs. What else an
// address may not be (addr.go) is judged at delivery, where
// -webhook-allow-private is known, as are the addresses a name resolves to.
func (p *Policy) hostRefused(host string) string {
	switch {
	case slices.Contains(metadataNames, host):
		return "cloud metadata endpoint"
	case strings.HasSuffix(host, ".svc.cluster.local"):
		return "Kubernetes internal DNS"
	case slices.Contains(localhostNames, host):
		if p.DisableLoopback {
			return "localhost address (webhooks.url.disable_loopback)"
		}
		return ""
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return "" // a name: judged by its addresses at delivery
	}
	ip = ip.Unmap().WithZone("")
	switch {
	case slices.Contains(metadataAddrs, ip):
		return "cloud metadata endpoint"
	case ip.IsLoopback() && p.DisableLoopback:
		return "loopback address (webhooks.url.disable_loopback)"
	case p.DisablePrivateIPs && isPrivate(ip):
		return "private address (webhooks.url.disable_private_ips)"
	}
	return ""
}

func isPrivate(ip netip.Addr) bool {
	return slices.ContainsFunc(privateRanges, func(r netip.Prefix) bool { return r.Contains(ip) })
}

// addrRefused names why a delivery under p may not reach ip ("" when it
// may): loopback as DisableLoopback says (with no policy, as the guard
// says), private as DisablePrivateIPs says, then allowPrivate (the
// -webhook-allow-private flag) lets every other address through, else the
// guard's policy (refusedKind) decides.
func (p *Policy) addrRefused(ip netip.Addr, allowPrivate bool) string {
	ip = ip.Unmap().WithZone("")
	if ip.IsLoopback() && p != nil {
		if p.DisableLoopback {
			return "loopback (webhooks.url.disable_loopback)"
		}
		return ""
	}
	if p != nil && p.DisablePrivateIPs && isPrivate(ip) {
		return "private (webhooks.url.disable_private_ips)"
	}
	if allowPrivate {
		return ""
	}
	return refusedKind(ip)
}

// addrCheck is the delivery guard's check of a host and one of its
// addresses under p with allowPrivate (nil when nothing is checked: no
// policy and the flag set). An exactly allowed host is not checked.
func (p *Policy) addrCheck(allowPrivate bool) func(host string, ip net.IP) string {
	if p == nil && allowPrivate {
		return nil
	}
	return func(host string, ip net.IP) string {
		if p == nil {
			return addrKind(ip) // the guard alone (allowPrivate is false here)
		}
		if p.trusted(host) {
			return ""
		}
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			return "invalid"
		}
		return p.addrRefused(a, allowPrivate)
	}
}

// filterFields keeps the AllowedFields of a delivery's body.
func (p *Policy) filterFields(body map[string]any) {
	if p == nil || len(p.AllowedFields) == 0 {
		return
	}
	for k := range body {
		if !slices.Contains(p.AllowedFields, k) {
			delete(body, k)
		}
	}
}
