package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/auth"
)

// The exposure rule without binding a public address: loopback is fine
// without auth, anything else needs auth or WEFT_AUTH=none (which warns).
func TestCheckExposure(t *testing.T) {
	t.Parallel()
	hook := func(*http.Request) (auth.Principal, error) { return auth.Principal{}, nil }
	for _, c := range []struct {
		cfg      Config
		refused  bool
		warnings int
	}{
		{Config{Addr: "127.0.0.1:8123"}, false, 0},
		{Config{Addr: "[::1]:8123"}, false, 0},
		{Config{Addr: "localhost:8123"}, false, 0},
		{Config{Addr: "0.0.0.0:8123"}, true, 0},
		{Config{Addr: ":8123"}, true, 0},
		{Config{Addr: "10.1.2.3:8123"}, true, 0},
		{Config{Addr: "0.0.0.0:8123", Auth: "none"}, false, 1},
		{Config{Addr: "0.0.0.0:8123", Auth: "keys"}, false, 0},
		{Config{Addr: "0.0.0.0:8123", Auth: "jwt"}, false, 0},
		{Config{Addr: "0.0.0.0:8123", Authenticate: hook}, false, 0},
		{Config{Addr: "127.0.0.1:8123", Auth: "none"}, false, 0},
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		err := c.cfg.checkExposure(log)
		if (err != nil) != c.refused {
			t.Errorf("%s auth %q: err %v, want refused=%v", c.cfg.Addr, c.cfg.Auth, err, c.refused)
		}
		if err != nil && (!strings.Contains(err.Error(), "WEFT_AUTH=none") || !strings.Contains(err.Error(), c.cfg.Addr)) {
			t.Errorf("refusal %q should name the address and WEFT_AUTH", err)
		}
		if n := strings.Count(buf.String(), "level=WARN"); n != c.warnings {
			t.Errorf("%s auth %q: %d warnings, want %d: %s", c.cfg.Addr, c.cfg.Auth, n, c.warnings, buf.String())
		}
		if c.warnings > 0 && !strings.Contains(buf.String(), "WITHOUT authentication") {
			t.Errorf("warning %q does not say auth is off", buf.String())
		}
	}
}
