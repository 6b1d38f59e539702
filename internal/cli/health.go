package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthCmd is `weft health`: GET /ok of the server this environment
// configures (WEFT_ADDR, a wildcard host read as loopback), exit 0 when it
// answers 200 and 1 otherwise. It is the health check of a container that
// has nothing else to run it with (the server's image is distroless: no
// shell, no curl), as docker-compose.yml uses it.
func healthCmd(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("weft health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := getenv("WEFT_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8123"
	}
	url := fs.String("url", "http://"+probeAddr(addr)+"/ok", "what to GET (default: /ok at WEFT_ADDR, a wildcard host as loopback)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "weft health: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		fmt.Fprintln(stderr, "weft health:", err)
		return 2
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "weft health:", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "weft health: %s: %s %s\n", *url, resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	fmt.Fprintf(stdout, "%s: %s\n", *url, strings.TrimSpace(string(body)))
	return 0
}

// probeAddr is host:port reaching a server listening on addr from the same
// host: a wildcard host (empty, 0.0.0.0, ::) is loopback.
func probeAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}
