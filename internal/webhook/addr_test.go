package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// Each special-purpose range refused, and global addresses around them
// allowed. Nothing here opens a connection.
func TestRefusedKind(t *testing.T) {
	refused := map[string]string{
		"0.0.0.0": "this-network", "0.1.2.3": "this-network",
		"10.1.2.3": "private", "172.16.0.1": "private", "172.31.255.254": "private", "192.168.1.1": "private",
		"100.64.0.1": "shared address space", "100.100.100.200": "shared address space", "100.127.255.254": "shared address space",
		"127.0.0.1": "loopback", "127.255.0.9": "loopback",
		"169.254.169.254": "link-local",
		"192.0.0.8":       "IETF protocol assignment",
		"192.0.2.10":      "documentation", "198.51.100.7": "documentation", "203.0.113.99": "documentation",
		"192.88.99.1": "6to4 relay anycast",
		"198.18.0.1":  "benchmarking", "198.19.255.254": "benchmarking",
		"224.0.0.1": "multicast", "239.255.255.250": "multicast",
		"240.0.0.1": "reserved", "255.255.255.255": "broadcast",
		// IPv6.
		"::1": "loopback", "::": "unspecified",
		"::ffff:127.0.0.1": "loopback", "::ffff:100.100.100.200": "shared address space", "::ffff:169.254.169.254": "link-local",
		"::127.0.0.1": "non-global IPv6", "::100.100.100.200": "non-global IPv6", "::8.8.8.8": "non-global IPv6",
		"64:ff9b::127.0.0.1": "NAT64 of loopback", "64:ff9b::a9fe:a9fe": "NAT64 of link-local", "64:ff9b::198.18.0.1": "NAT64 of benchmarking",
		"64:ff9b:1::1.2.3.4": "non-global IPv6",
		"2002:7f00:1::":      "6to4 of loopback", "2002:a9fe:a9fe::1": "6to4 of link-local", "2002:6464:64c8::": "6to4 of shared address space",
		"2001::1": "Teredo", "2001:2::1": "IETF protocol assignment", "2001:10::1": "IETF protocol assignment",
		"2001:db8::1": "documentation", "3fff::1": "documentation", "5f00::1": "non-global IPv6",
		"100::1": "non-global IPv6", "fc00::1": "non-global IPv6", "fd12:3456::1": "non-global IPv6",
		"fe80::1": "link-local", "fec0::1": "non-global IPv6", "ff02::1": "multicast", "ff0e::1": "multicast",
	}
	for s, want := range refused {
		if got := refusedKind(netip.MustParseAddr(s)); got != want {
			t.Errorf("refusedKind(%s) = %q, want %q", s, got, want)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.15.255.255", "172.32.0.1",
		"192.0.0.9", "192.0.0.10", "198.17.255.255", "198.20.0.1", "223.255.255.254",
		"::ffff:8.8.8.8", "64:ff9b::8.8.8.8", "2002:0808:0808::1", "2606:4700::1111", "2001:4860:4860::8888",
		"2001:3::1", "2001:20::1", "2620:4f:8000::1"} {
		if got := refusedKind(netip.MustParseAddr(s)); got != "" {
			t.Errorf("refusedKind(%s) = %q, want allowed", s, got)
		}
	}
	// A net.IP in its 16-byte form is judged as its IPv4 address.
	if got := addrKind(net.ParseIP("100.100.100.200").To16()); got != "shared address space" {
		t.Errorf("addrKind(16-byte 100.100.100.200) = %q", got)
	}
}

// The guarded dialer refuses a host when any address it resolves to is
// refused, before dialling anything; unguarded (AllowPrivate) it dials the
// resolved address. The resolver and the dialer are fakes: no packet
// leaves the process even when the guard is broken.
func TestGuardedDialRefusesBeforeDialling(t *testing.T) {
	answers := map[string][]string{
		"metadata.example":  {"100.100.100.200"},
		"bench.example":     {"198.18.0.1"},
		"mapped.example":    {"::ffff:10.0.0.1"},
		"compat.example":    {"::127.0.0.1"},
		"nat64.example":     {"64:ff9b::a9fe:a9fe"},
		"sixtofour.example": {"2002:7f00:1::1"},
		"mixed.example":     {"8.8.8.8", "192.168.0.1"}, // one bad address refuses the host
		"public.example":    {"8.8.8.8"},
	}
	resolve := func(_ context.Context, host string) ([]net.IPAddr, error) {
		var out []net.IPAddr
		for _, s := range answers[host] {
			out = append(out, net.IPAddr{IP: net.ParseIP(s)})
		}
		return out, nil
	}
	var dialled []string
	errDialled := errors.New("fake dial")
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return nil, errDialled
	}
	guarded := guardedDial((*Policy)(nil).addrCheck(false), resolve, dial)
	for host := range answers {
		if host == "public.example" {
			continue
		}
		_, err := guarded(context.Background(), "tcp", host+":80")
		var refused *refusedAddrError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "-webhook-allow-private") {
			t.Errorf("%s: %v, want a refusal", host, err)
		}
	}
	if len(dialled) != 0 {
		t.Fatalf("the guard dialled %v", dialled)
	}
	if _, err := guarded(context.Background(), "tcp", "public.example:443"); !errors.Is(err, errDialled) || len(dialled) != 1 || dialled[0] != "8.8.8.8:443" {
		t.Fatalf("public host: %v, dialled %v", err, dialled)
	}
	dialled = nil
	if _, err := guardedDial(nil, resolve, dial)(context.Background(), "tcp", "metadata.example:80"); !errors.Is(err, errDialled) ||
		len(dialled) != 1 || dialled[0] != "100.100.100.200:80" {
		t.Fatalf("unguarded: %v, dialled %v", err, dialled)
	}
}
