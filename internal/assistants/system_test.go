package assistants_test

import (
	"net/http"
	"testing"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A database once served with the demo graphs lists none of their system
// assistants (nor the graphs) under a server without them, as weft dev
// runs; assistants users made of them stay.
func TestServerWithoutDemosPrunesTheirSystemAssistants(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	plain := servertest.StartWith(t, dsn, nil)
	mine := create(t, plain, map[string]any{"graph_id": "foo_bar", "name": "mine"})
	if n := len(list(t, plain.Must(http.StatusOK, "POST", "/assistants/search", map[string]any{"metadata": map[string]any{"created_by": "system"}}))); n == 0 {
		t.Fatal("the plain server has no system assistants")
	}

	dev := servertest.StartWith(t, dsn, func(c *server.Config) { c.NoBuiltinGraphs = true })
	system := list(t, dev.Must(http.StatusOK, "POST", "/assistants/search", map[string]any{"metadata": map[string]any{"created_by": "system"}}))
	if len(system) != 0 {
		t.Fatalf("system assistants under a server without the demos: %v", field(system, "graph_id"))
	}
	dev.Must(http.StatusOK, "GET", "/assistants/"+mine["assistant_id"].(string), nil)
	d := dev.Must(http.StatusUnprocessableEntity, "POST", "/threads/"+newThread(t, dev, nil)+"/runs", map[string]any{"assistant_id": "foo_bar"}).Detail(t)
	if d == "" {
		t.Fatal("no detail")
	}
}

// A worker's registration may carry the config and context its graph's
// system assistant starts with (LANGGRAPH_CONFIG); an existing one keeps
// its own.
func TestWorkerGraphDefaults(t *testing.T) {
	s := start(t)
	reg := map[string]any{"graph_id": "js_defaults", "worker_id": "test",
		"drawable": map[string]any{"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "a"}, map[string]any{"id": "__end__"}},
			"edges": []any{map[string]any{"source": "__start__", "target": "a"}, map[string]any{"source": "a", "target": "__end__"}}},
		"config":  map[string]any{"configurable": map[string]any{"model_name": "openai"}},
		"context": map[string]any{"model": "unknown"}}
	aid := s.Must(http.StatusOK, "POST", "/dispatch/graphs", reg).Map(t)["assistant_id"].(string)
	a := s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)
	wantJSON(t, "config", a["config"], `{"configurable":{"model_name":"openai"}}`)
	wantJSON(t, "context", a["context"], `{"model":"unknown"}`)
	v := list(t, s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/versions", map[string]any{}))
	if len(v) != 1 {
		t.Fatalf("versions %v", v)
	}
	wantJSON(t, "version 1's context", v[0]["context"], `{"model":"unknown"}`)

	reg["config"] = map[string]any{"configurable": map[string]any{"model_name": "other"}}
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", reg)
	a = s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)
	wantJSON(t, "config after a second registration", a["config"], `{"configurable":{"model_name":"openai"}}`)
}
