package webhook

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// The address policy of deliveries (unless AllowPrivate): a webhook may
// reach only globally reachable unicast addresses. Refused are every block
// of the IANA IPv4 and IPv6 special-purpose address registries that is not
// globally reachable (loopback, private, shared address space with cloud
// metadata addresses such as 100.100.100.200, link-local, benchmarking,
// documentation, reserved, discard-only, translation-local, ...), multicast
// and broadcast, and in IPv6 everything outside 2000::/3 (the global unicast
// space). An IPv6 address that carries an IPv4 address (IPv4-mapped
// ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d, 6to4 2002:aabb:ccdd::) is judged
// by that IPv4 address; the deprecated IPv4-compatible form ::a.b.c.d and
// Teredo are refused outright. The check is made on the addresses the host
// resolves to, and the connection goes to the checked address.

type block struct {
	prefix netip.Prefix
	kind   string
}

func blocks(kind string, prefixes ...string) []block {
	out := make([]block, len(prefixes))
	for i, p := range prefixes {
		out[i] = block{netip.MustParsePrefix(p), kind}
	}
	return out
}

// ipv4Refused lists the IPv4 blocks deliveries may not reach, most specific
// first where they overlap (ipv4Global are the global exceptions of
// 192.0.0.0/24).
var (
	ipv4Global  = []netip.Prefix{netip.MustParsePrefix("192.0.0.9/32"), netip.MustParsePrefix("192.0.0.10/32")}
	ipv4Refused = concat(
		blocks("this-network", "0.0.0.0/8"),
		blocks("private", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
		blocks("shared address space", "100.64.0.0/10"),
		blocks("loopback", "127.0.0.0/8"),
		blocks("link-local", "169.254.0.0/16"),
		blocks("IETF protocol assignment", "192.0.0.0/24"),
		blocks("documentation", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
		blocks("6to4 relay anycast", "192.88.99.0/24"),
		blocks("benchmarking", "198.18.0.0/15"),
		blocks("multicast", "224.0.0.0/4"),
		blocks("broadcast", "255.255.255.255/32"),
		blocks("reserved", "240.0.0.0/4"),
	)
	ipv6Global  = netip.MustParsePrefix("2000::/3")
	ipv6Refused = concat(
		blocks("IETF protocol assignment", "2001::/23"),
		blocks("documentation", "2001:db8::/32", "3fff::/20"),
	)
	// Global exceptions inside 2001::/23 (the registry's globally
	// reachable entries).
	ipv6GlobalExceptions = []netip.Prefix{netip.MustParsePrefix("2001:1::1/128"), netip.MustParsePrefix("2001:1::2/128"),
		netip.MustParsePrefix("2001:3::/32"), netip.MustParsePrefix("2001:4:112::/48"), netip.MustParsePrefix("2001:20::/28")}
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	teredo    = netip.MustParsePrefix("2001::/32")
)

func concat(lists ...[]block) []block {
	var out []block
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// refusedKind names why a delivery may not reach ip ("" when it may).
func refusedKind(ip netip.Addr) string {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		return refusedKind(ip.Unmap())
	}
	if ip.Is4() {
		return kindIn(ipv4Refused, ipv4Global, ip)
	}
	switch {
	case ip == netip.IPv6Loopback():
		return "loopback"
	case ip == netip.IPv6Unspecified():
		return "unspecified"
	case nat64.Contains(ip):
		a := ip.As16()
		if k := refusedKind(netip.AddrFrom4([4]byte(a[12:16]))); k != "" {
			return "NAT64 of " + k
		}
		return ""
	case ip.IsMulticast():
		return "multicast"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case !ipv6Global.Contains(ip):
		// ::a.b.c.d (IPv4-compatible), unique local fc00::/7, site-local,
		// discard-only 100::/64, 64:ff9b:1::/48, segment routing 5f00::/16
		// and the rest of the space outside global unicast.
		return "non-global IPv6"
	case teredo.Contains(ip):
		return "Teredo"
	case sixToFour.Contains(ip):
		a := ip.As16()
		if k := refusedKind(netip.AddrFrom4([4]byte(a[2:6]))); k != "" {
			return "6to4 of " + k
		}
		return ""
	}
	return kindIn(ipv6Refused, ipv6GlobalExceptions, ip)
}

// kindIn is the kind of the first block of refused holding ip, "" when
// none does or one of the global exceptions does.
func kindIn(refused []block, global []netip.Prefix, ip netip.Addr) string {
	for _, g := range global {
		if g.Contains(ip) {
			return ""
		}
	}
	for _, b := range refused {
		if b.prefix.Contains(ip) {
			return b.kind
		}
	}
	return ""
}

// addrKind is refusedKind of a net.IP ("invalid" for one that is not an
// address).
func addrKind(ip net.IP) string {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return "invalid"
	}
	return refusedKind(a)
}

// guardedDial returns a DialContext that resolves the host with resolve
// and dials the resolved addresses with dial. With a check (nil: none) it
// refuses the host, before any connection, when check names a reason to
// refuse any of its addresses (by default the policy above: see
// Policy.addrCheck); since the checked address is the one dialled, a DNS
// answer that changes between check and connect cannot bypass it.
func guardedDial(check func(host string, ip net.IP) string, resolve func(ctx context.Context, host string) ([]net.IPAddr, error),
	dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("webhook host %s has no address", host)
		}
		if check != nil {
			for _, ip := range ips {
				if k := check(host, ip.IP); k != "" {
					return nil, &refusedAddrError{host: host, ip: ip.IP, kind: k}
				}
			}
		}
		var firstErr error
		for _, ip := range ips {
			c, err := dial(ctx, network, net.JoinHostPort(ip.IP.String(), port))
			if err == nil {
				return c, nil
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		return nil, firstErr
	}
}
