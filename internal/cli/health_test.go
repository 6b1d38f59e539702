package cli_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/cli"
	"github.com/weftdev/weft/internal/server/servertest"
)

// weft health probes /ok of the server WEFT_ADDR configures, a wildcard
// host read as loopback, and its exit code says whether it answered 200:
// the health check docker-compose.yml runs in the distroless image.
func TestHealth(t *testing.T) {
	t.Parallel()
	health := func(env map[string]string, args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := cli.Run(nil, nil, append([]string{"health"}, args...), func(k string) string { return env[k] }, &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	srv := servertest.Start(t)
	u, _ := url.Parse(srv.URL)
	_, port, _ := net.SplitHostPort(u.Host)
	for _, addr := range []string{"0.0.0.0:" + port, ":" + port, "127.0.0.1:" + port} {
		if code, out := health(map[string]string{"WEFT_ADDR": addr}); code != 0 || !strings.Contains(out, "127.0.0.1:"+port+"/ok") {
			t.Errorf("WEFT_ADDR=%s: exit %d %q, want 0 from 127.0.0.1:%s/ok", addr, code, out, port)
		}
	}
	if code, out := health(nil, "-url", srv.URL+"/ok?check_db=0"); code != 0 {
		t.Errorf("-url: exit %d %q", code, out)
	}
	// Not ready (the server's /ok answers 503 when its database is down) and nobody listening: 1.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"detail":"database unreachable"}`, http.StatusServiceUnavailable)
	}))
	defer down.Close()
	if code, out := health(nil, "-url", down.URL+"/ok"); code != 1 || !strings.Contains(out, "503") {
		t.Errorf("503: exit %d %q, want 1 naming the status", code, out)
	}
	_ = srv.Srv.Shutdown(context.Background())
	if code, _ := health(map[string]string{"WEFT_ADDR": "0.0.0.0:" + port}); code != 1 {
		t.Errorf("stopped server: exit %d, want 1", code)
	}
	if code, _ := health(nil, "extra"); code != 2 {
		t.Errorf("stray argument: exit %d, want 2", code)
	}
}
