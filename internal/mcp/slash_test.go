package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftdev/weft/internal/server/servertest"
)

// /mcp/, the name LangGraph's server's document gives the endpoint, is
// /mcp: an MCP client connected there lists and calls the tools, a page of
// another origin is refused, and GET and DELETE answer 405 with Allow:
// POST as on /mcp (a stateless endpoint: no stream, no session).
func TestTrailingSlash(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "weft-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp/", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect to /mcp/: %v", err)
	}
	defer cs.Close()
	tools, _ := allTools(t, cs)
	if toolNamed(tools, "foo_bar") == nil {
		t.Fatalf("no foo_bar among %d tools", len(tools))
	}
	if res := call(t, cs, "foo_bar", map[string]any{"foo": "x"}); res.IsError {
		t.Fatalf("tools/call through /mcp/: %s", text(res))
	}

	send := func(method, origin string) (*http.Response, []byte) {
		var body io.Reader
		if method == "POST" {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		}
		req, _ := http.NewRequest(method, srv.URL+"/mcp/", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	if res, b := send("POST", "http://evil.example"); res.StatusCode != http.StatusForbidden {
		t.Errorf("POST /mcp/ from another origin: %d %s", res.StatusCode, b)
	}
	for _, m := range []string{"GET", "DELETE"} {
		res, b := send(m, "")
		var detail struct {
			Detail string `json:"detail"`
		}
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "POST" ||
			json.Unmarshal(b, &detail) != nil || detail.Detail == "" {
			t.Errorf("%s /mcp/: %d Allow %q %s, want 405 Allow POST with a detail", m, res.StatusCode, res.Header.Get("Allow"), b)
		}
	}
}
