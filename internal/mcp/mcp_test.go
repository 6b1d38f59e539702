package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// headers adds fixed headers to every request (a key, a test tenant).
type headers struct {
	h    map[string]string
	next http.RoundTripper
}

// builtins is how many tools a tenant sees on a fresh server: one per
// built-in graph (their system assistants).
var builtins = len(builtin.Graphs().IDs())

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// connect opens an MCP client session (the official Go SDK's client over
// Streamable HTTP) to srv's /mcp, sending hdr with every request.
func connect(t *testing.T, url string, hdr map[string]string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "weft-test", Version: "1"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: headers{h: hdr, next: http.DefaultTransport}, Timeout: 60 * time.Second}}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// allTools lists every tool, page by page; it fails on a repeated name.
func allTools(t *testing.T, cs *sdk.ClientSession) (tools []*sdk.Tool, pages int) {
	t.Helper()
	seen := map[string]bool{}
	cursor := ""
	for {
		res, err := cs.ListTools(context.Background(), &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		pages++
		for _, tl := range res.Tools {
			if seen[tl.Name] {
				t.Fatalf("tool %q listed twice", tl.Name)
			}
			seen[tl.Name] = true
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, pages
		}
		cursor = res.NextCursor
	}
}

func toolNamed(tools []*sdk.Tool, name string) *sdk.Tool {
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	return nil
}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestListAndCall(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cs := connect(t, srv.URL, nil)
	if got := cs.InitializeResult(); got == nil || got.ServerInfo.Name != "weft" || got.Capabilities.Tools == nil {
		t.Fatalf("initialize result: %+v", got)
	}
	// An assistant of one's own, with a description and a name to normalize.
	srv.Must(200, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "name": "Foo bar agent!",
		"description": "Writes foo and bar."})
	tools, _ := allTools(t, cs)
	for _, name := range []string{"echo_chat", "foo_bar", "hitl", "slow", "Foo_bar_agent"} {
		tl := toolNamed(tools, name)
		if tl == nil {
			t.Fatalf("no tool %q in %d tools", name, len(tools))
		}
		schema, _ := tl.InputSchema.(map[string]any)
		if schema["type"] != "object" {
			t.Fatalf("tool %q input schema %v: not an object schema", name, tl.InputSchema)
		}
		if tl.Description == "" || tl.Title == "" || tl.Meta["weft.dev/assistant_id"] == nil {
			t.Fatalf("tool %q: %+v", name, tl)
		}
	}
	if d := toolNamed(tools, "Foo_bar_agent").Description; d != "Writes foo and bar." {
		t.Fatalf("description %q", d)
	}
	// The chat graph's messages are a string, the user's message.
	props := toolNamed(tools, "echo_chat").InputSchema.(map[string]any)["properties"].(map[string]any)
	if m, _ := props["messages"].(map[string]any); m["type"] != "string" {
		t.Fatalf("echo_chat messages schema %v", props["messages"])
	}

	res := call(t, cs, "echo_chat", map[string]any{"messages": "hello there"})
	if res.IsError {
		t.Fatalf("echo_chat: error %s", text(res))
	}
	var out struct {
		Messages []struct {
			Type, Content string
		} `json:"messages"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || len(out.Messages) != 2 || out.Messages[1].Content != "echo: hello there" {
		t.Fatalf("echo_chat structured content %s (%v)", b, err)
	}
	if !strings.Contains(text(res), "echo: hello there") {
		t.Fatalf("echo_chat text %q", text(res))
	}
	res = call(t, cs, "Foo_bar_agent", map[string]any{"foo": "x"})
	if b, _ := json.Marshal(res.StructuredContent); res.IsError || string(b) != `{"bar":["a","b"],"foo":"b"}` {
		t.Fatalf("foo_bar: isError %v, %s", res.IsError, b)
	}
	// The call is a run like any other, through the runs service (seen
	// while it executes: its temporary thread is deleted afterwards).
	if tenant := runWhileCalling(t, srv, cs, "slow"); tenant != "" {
		t.Fatalf("run's tenant %q", tenant)
	}
}

// runWhileCalling calls tool (the slow graph) for 2 s and returns the
// tenant of the run the call created, read while it executes.
func runWhileCalling(t *testing.T, srv *servertest.Server, cs *sdk.ClientSession, tool string) string {
	t.Helper()
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, _ := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"ms": 1000}})
		done <- res
	}()
	var tenant string
	deadline := time.Now().Add(10 * time.Second)
	for tenant == "" && time.Now().Before(deadline) {
		var tenants []string
		rows, err := srv.DB.Query(context.Background(),
			`SELECT tenant_id FROM runs WHERE metadata->>'mcp_tool' = $1 AND status IN ('pending', 'running')`, tool)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			tenants = append(tenants, "="+s)
		}
		rows.Close()
		if len(tenants) > 0 {
			tenant = tenants[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if tenant == "" {
		t.Fatalf("no run of tool %q seen while it was called", tool)
	}
	if res := <-done; res == nil || res.IsError {
		t.Fatalf("call of %q failed: %+v", tool, res)
	}
	return strings.TrimPrefix(tenant, "=")
}

func TestErrors(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	cs := connect(t, srv.URL, nil)

	// A run that fails is a tool error with its text, not a protocol error.
	res := call(t, cs, "slow", map[string]any{"ms": "not a number"})
	if !res.IsError || !strings.Contains(text(res), "ms must be a number") {
		t.Fatalf("failing run: isError %v, %q", res.IsError, text(res))
	}
	// Input the run refuses is a tool error too.
	res = call(t, cs, "echo_chat", map[string]any{"messages": []any{map[string]any{"type": "bogus", "content": "x"}}})
	if !res.IsError || !strings.Contains(text(res), "Invalid input") {
		t.Fatalf("bad input: isError %v, %q", res.IsError, text(res))
	}
	// An unknown tool is a JSON-RPC error.
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil ||
		!strings.Contains(err.Error(), "Unknown tool") {
		t.Fatalf("unknown tool: %v", err)
	}
	// No arguments at all: the graph's input is {}.
	if res := call(t, cs, "foo_bar", nil); res.IsError {
		t.Fatalf("no arguments: %s", text(res))
	}

	// Raw HTTP: arguments that are not an object, a bad cursor, GET and
	// DELETE (stateless: 405), garbage (400), never a 5xx.
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, b := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"foo_bar","arguments":[1]}}`); st != 200 ||
		!strings.Contains(b, `"isError":true`) || !strings.Contains(b, "must be an object") {
		t.Fatalf("array arguments: %d %s", st, b)
	}
	if st, b := post(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"!!"}}`); st != 200 ||
		!strings.Contains(b, `-32602`) {
		t.Fatalf("bad cursor: %d %s", st, b)
	}
	for _, body := range []string{`not json`, `{"jsonrpc":"2.0","id":1,"method":7}`, `[]`, ``} {
		if st, b := post(body); st < 400 || st >= 500 || !strings.HasPrefix(b, `{"detail":`) {
			t.Fatalf("body %q: %d %s, want a 4xx {\"detail\"}", body, st, b)
		}
	}
	for _, m := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(m, srv.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("%s /mcp: %d, want 405", m, resp.StatusCode)
		}
	}
	// The transport checks Origin itself (DNS rebinding): a page of another
	// origin is refused before anything runs; a loopback page is served.
	for origin, want := range map[string]int{"http://evil.example": 403, "http://localhost:5173": 200} {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("POST /mcp from Origin %s: %d %s, want %d", origin, resp.StatusCode, b, want)
		}
	}
	var info struct {
		Flags map[string]bool `json:"flags"`
	}
	srv.Must(200, "GET", "/info", nil).JSON(t, &info)
	if !info.Flags["mcp"] {
		t.Fatalf("/info flags %v: no mcp", info.Flags)
	}
}

func TestPaging(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	const n = 205
	for i := range n {
		srv.Must(200, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "name": fmt.Sprintf("agent %03d", i)})
	}
	// Namesakes: the oldest keeps the name, the others take an id suffix.
	twin1 := srv.Must(200, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "name": "twin"}).Map(t)
	twin2 := srv.Must(200, "POST", "/assistants", map[string]any{"graph_id": "echo_chat", "name": "twin"}).Map(t)
	cs := connect(t, srv.URL, nil)
	tools, pages := allTools(t, cs)
	if want := builtins + n + 2; len(tools) != want || pages != 3 {
		t.Fatalf("%d tools in %d pages, want %d in 3", len(tools), pages, want)
	}
	for i := 1; i < len(tools); i++ {
		if tools[i-1].Name >= tools[i].Name {
			t.Fatalf("tools out of order: %q before %q", tools[i-1].Name, tools[i].Name)
		}
	}
	if tl := toolNamed(tools, "twin"); tl == nil || tl.Meta["weft.dev/assistant_id"] != twin1["assistant_id"] {
		t.Fatalf("twin: %+v", tl)
	}
	id2 := twin2["assistant_id"].(string)
	tl := toolNamed(tools, "twin-"+id2[:8])
	if tl == nil || tl.Meta["weft.dev/graph_id"] != "echo_chat" {
		t.Fatalf("second twin: %+v", tl)
	}
	if res := call(t, cs, tl.Name, map[string]any{"messages": "hi"}); res.IsError || !strings.Contains(text(res), "echo: hi") {
		t.Fatalf("second twin call: %s", text(res))
	}
}

// Tenants: each sees the shared system assistants and its own, never
// another's, and cannot call another's.
func TestTenants(t *testing.T) {
	t.Parallel()
	srv := servertest.StartWith(t, pgtest.DSN(t), servertest.TestTenants)
	a := map[string]string{servertest.TenantHeader: "tenant-a"}
	b := map[string]string{servertest.TenantHeader: "tenant-b"}
	req, _ := http.NewRequest("POST", srv.URL+"/assistants", strings.NewReader(`{"graph_id":"foo_bar","name":"a_secret"}`))
	req.Header.Set(servertest.TenantHeader, "tenant-a")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("create tenant A's assistant: %v %v", resp, err)
	}
	resp.Body.Close()

	csA, csB := connect(t, srv.URL, a), connect(t, srv.URL, b)
	toolsA, _ := allTools(t, csA)
	toolsB, _ := allTools(t, csB)
	if toolNamed(toolsA, "a_secret") == nil || toolNamed(toolsA, "echo_chat") == nil {
		t.Fatalf("tenant A's tools: %d", len(toolsA))
	}
	if toolNamed(toolsB, "a_secret") != nil || len(toolsB) != builtins {
		t.Fatalf("tenant B sees %d tools, a_secret: %v", len(toolsB), toolNamed(toolsB, "a_secret") != nil)
	}
	if _, err := csB.CallTool(context.Background(), &sdk.CallToolParams{Name: "a_secret"}); err == nil ||
		!strings.Contains(err.Error(), "Unknown tool") {
		t.Fatalf("tenant B calls A's tool: %v", err)
	}
	if res := call(t, csA, "a_secret", map[string]any{"foo": 1}); res.IsError {
		t.Fatalf("tenant A calls its tool: %s", text(res))
	}
	// A call's run is the caller's tenant's.
	if tenant := runWhileCalling(t, srv, csA, "slow"); tenant != "tenant-a" {
		t.Fatalf("run's tenant %q", tenant)
	}
	// A credential without the threads scope lists but does not run.
	csList := connect(t, srv.URL, map[string]string{servertest.TenantHeader: "tenant-a", servertest.ScopesHeader: "assistants"})
	if res := call(t, csList, "a_secret", nil); !res.IsError || !strings.Contains(text(res), "threads scope") {
		t.Fatalf("assistants-only credential: isError %v %q", res.IsError, text(res))
	}
}

// With API keys: no key is a 401, a key sees its tenant's tools only.
func TestAPIKeys(t *testing.T) {
	t.Parallel()
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Auth = "keys" })
	keyA, _, err := auth.APIKeyCreate(context.Background(), srv.DB, "acme", []string{auth.ScopeTenant}, "a")
	if err != nil {
		t.Fatal(err)
	}
	keyB, _, err := auth.APIKeyCreate(context.Background(), srv.DB, "globex", []string{auth.ScopeTenant}, "b")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"POST", "GET", "DELETE"} {
		req, _ := http.NewRequest(m, srv.URL+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s /mcp without a key: %d, want 401", m, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/assistants", strings.NewReader(`{"graph_id":"echo_chat","name":"acme_helper"}`))
	req.Header.Set("x-api-key", keyA)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("create acme's assistant: %v %v", resp, err)
	}
	resp.Body.Close()
	csA := connect(t, srv.URL, map[string]string{"x-api-key": keyA})
	csB := connect(t, srv.URL, map[string]string{"Authorization": "Bearer " + keyB})
	toolsA, _ := allTools(t, csA)
	toolsB, _ := allTools(t, csB)
	if toolNamed(toolsA, "acme_helper") == nil || toolNamed(toolsB, "acme_helper") != nil {
		t.Fatalf("acme sees %d tools, globex %d; globex sees acme_helper: %v", len(toolsA), len(toolsB),
			toolNamed(toolsB, "acme_helper") != nil)
	}
	if res := call(t, csA, "acme_helper", map[string]any{"messages": "ping"}); res.IsError || !strings.Contains(text(res), "echo: ping") {
		t.Fatalf("acme calls its tool: %s", text(res))
	}
	if _, err := csB.CallTool(context.Background(), &sdk.CallToolParams{Name: "acme_helper"}); err == nil {
		t.Fatal("globex called acme's tool")
	}
}

// A call that asked for progress hears it while the run executes; a client
// that goes away cancels the call's run.
func TestProgressAndDisconnect(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t)
	progress := make(chan string, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "weft-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- fmt.Sprint(req.Params.ProgressToken, " ", req.Params.Message)
		}})
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3000, "tag": "p"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("slow: %v %+v", err, res)
	}
	select {
	case p := <-progress:
		if !strings.HasPrefix(p, "tok-1 run ") {
			t.Fatalf("progress %q", p)
		}
	default:
		t.Fatal("no progress notification during a 6 s run")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{"ms":5000,"tag":"gone"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.ReadAll(resp.Body) // the body ends when ctx does
		resp.Body.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var status string
		err := srv.DB.QueryRow(context.Background(), `SELECT status FROM runs
			WHERE metadata->>'mcp_tool' = 'slow' AND status <> 'success'`).Scan(&status)
		if err == nil && status == "interrupted" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run of a call whose client went away: %q (%v), want interrupted", status, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An embedding program's authorize hook decides on each call as on POST
// /runs/wait: ("threads", "create_run").
func TestAuthorizeHook(t *testing.T) {
	t.Parallel()
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		servertest.TestTenants(c)
		c.Authorize = func(_ context.Context, req auth.Request) (auth.Decision, error) {
			if req.Resource == "threads" && req.Action == "create_run" && req.Principal.Tenant == "readonly" {
				return auth.Deny("runs are not for you"), nil
			}
			return auth.Allow(), nil
		}
	})
	ro := connect(t, srv.URL, map[string]string{servertest.TenantHeader: "readonly"})
	if tools, _ := allTools(t, ro); len(tools) != builtins {
		t.Fatalf("readonly lists %d tools", len(tools))
	}
	if res := call(t, ro, "foo_bar", nil); !res.IsError || text(res) != "runs are not for you" {
		t.Fatalf("denied call: isError %v %q", res.IsError, text(res))
	}
	rw := connect(t, srv.URL, map[string]string{servertest.TenantHeader: "other"})
	if res := call(t, rw, "foo_bar", nil); res.IsError {
		t.Fatalf("allowed call: %s", text(res))
	}
}
