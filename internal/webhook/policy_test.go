package webhook

import (
	"net"
	"testing"

	"github.com/weftdev/weft/internal/apperr"
)

// What a langgraph.json webhooks policy accepts at a run's creation, as
// LangGraph's server judges a webhook URL.
func TestPolicyValidate(t *testing.T) {
	strict := &Policy{RequireHTTPS: true, AllowedDomains: []string{"hooks.example.com", "*.corp.test"},
		AllowedPorts: []int{443, 8443}, MaxURLLength: 60, DisableLoopback: true}
	open := &Policy{MaxURLLength: 4096, DisableLoopback: false, DisablePrivateIPs: true}
	byDefault := &Policy{MaxURLLength: 4096, DisableLoopback: true}
	cases := []struct {
		p    *Policy
		url  string
		want bool // accepted
	}{
		{strict, "https://hooks.example.com/x", true},
		{strict, "https://HOOKS.example.com:8443/x", true},
		{strict, "http://hooks.example.com/x", false},                            // require_https
		{strict, "https://hooks.example.com:444/x", false},                       // port
		{strict, "https://a.corp.test/x", true},                                  // wildcard subdomain
		{strict, "https://a.b.corp.test/x", true},                                // deeper
		{strict, "https://corp.test/x", false},                                   // not the apex
		{strict, "https://evilcorp.test/x", false},                               // not a suffix match
		{strict, "https://other.example.com/x", false},                           // domain
		{strict, "https://hooks.example.com/" + string(make([]byte, 60)), false}, // length
		{strict, "/hooks/done", false},                                           // loopback path
		{byDefault, "/hooks/done", false},
		{byDefault, "http://localhost:9000/x", false},
		{byDefault, "http://127.0.0.2/x", false},
		{byDefault, "http://[::1]/x", false},
		{byDefault, "http://10.1.2.3/x", true}, // private: judged at delivery by the guard
		{byDefault, "http://169.254.169.254/latest", false},
		{byDefault, "http://metadata.google.internal/x", false},
		{byDefault, "http://api.svc.cluster.local/x", false},
		{byDefault, "http://example.com/x", true},
		{open, "/hooks/done", true},
		{open, "http://localhost:9000/x", true},
		{open, "http://10.1.2.3/x", false}, // disable_private_ips
		{open, "http://[fd00::1]/x", false},
		{nil, "/hooks/done", true},
		{nil, "http://localhost/x", true},
		{nil, "ftp://example.com/x", false},
		{&Policy{AllowedDomains: []string{"localhost"}, DisableLoopback: true}, "http://localhost/x", true}, // listed: trusted
	}
	for _, c := range cases {
		err := c.p.Validate(c.url)
		if (err == nil) != c.want {
			t.Errorf("%+v Validate(%q) = %v, want accepted %v", c.p, c.url, err, c.want)
		}
		if err != nil && apperr.CodeOf(err) != apperr.Invalid {
			t.Errorf("Validate(%q): %v is not a 422", c.url, err)
		}
	}
}

// The delivery guard under a policy: loopback as disable_loopback says
// (whatever -webhook-allow-private says), private as disable_private_ips
// says, an exactly allowed host unchecked, the rest as without a policy.
func TestPolicyAddrCheck(t *testing.T) {
	loop, private, public, linkLocal := net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1"), net.ParseIP("8.8.8.8"), net.ParseIP("169.254.169.254")
	if (*Policy)(nil).addrCheck(true) != nil {
		t.Fatal("no policy and the flag: no check")
	}
	cases := []struct {
		p            *Policy
		allowPrivate bool
		host         string
		ip           net.IP
		refused      bool
	}{
		{nil, false, "h", loop, true},
		{nil, false, "h", public, false},
		{&Policy{DisableLoopback: true}, true, "h", loop, true},
		{&Policy{DisableLoopback: false}, false, "h", loop, false},
		{&Policy{DisableLoopback: false}, false, "h", private, true},
		{&Policy{DisableLoopback: false}, true, "h", private, false},
		{&Policy{DisablePrivateIPs: true}, true, "h", private, true},
		{&Policy{DisablePrivateIPs: true}, true, "h", linkLocal, false},
		{&Policy{}, false, "h", linkLocal, true},
		{&Policy{AllowedDomains: []string{"h"}, DisableLoopback: true}, false, "h", loop, false},
		{&Policy{}, false, "h", public, false},
	}
	for _, c := range cases {
		if got := c.p.addrCheck(c.allowPrivate)(c.host, c.ip); (got != "") != c.refused {
			t.Errorf("%+v allowPrivate=%v %s %s: %q, want refused %v", c.p, c.allowPrivate, c.host, c.ip, got, c.refused)
		}
	}
}
