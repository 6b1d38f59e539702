package assistants_test

import (
	"net/http"
	"testing"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A server given graph descriptions (weft dev: langgraph.json's
// graphs.<id>.description) gives each registered graph's system assistant
// its description, none for a graph it does not describe, at every
// registration, in place (the version stays): a description a user
// patched in is the config's again at the next. A server given none
// leaves descriptions as they are.
func TestWorkerGraphDescriptions(t *testing.T) {
	t.Parallel()
	reg := func(s *servertest.Server, graphID string) string {
		t.Helper()
		return s.Must(http.StatusOK, "POST", "/dispatch/graphs", map[string]any{"graph_id": graphID, "worker_id": "test",
			"drawable": map[string]any{"nodes": []any{map[string]any{"id": "__start__"}, map[string]any{"id": "a"}, map[string]any{"id": "__end__"}},
				"edges": []any{map[string]any{"source": "__start__", "target": "a"}, map[string]any{"source": "a", "target": "__end__"}}}}).Map(t)["assistant_id"].(string)
	}
	// want checks the assistant's description and version, and that its
	// current version holds that description.
	want := func(s *servertest.Server, aid string, description any, version float64) {
		t.Helper()
		a := s.Must(http.StatusOK, "GET", "/assistants/"+aid, nil).Map(t)
		if a["description"] != description || a["version"] != version {
			t.Fatalf("%s: description %#v version %v; want %#v version %v", a["graph_id"], a["description"], a["version"], description, version)
		}
		for _, v := range list(t, s.Must(http.StatusOK, "POST", "/assistants/"+aid+"/versions", map[string]any{})) {
			if v["version"] == version && v["description"] != description {
				t.Fatalf("%s: version %v holds description %#v; want %#v", a["graph_id"], version, v["description"], description)
			}
		}
	}
	dsn := pgtest.DSN(t)
	dev := servertest.StartWith(t, dsn, func(c *server.Config) {
		c.NoBuiltinGraphs = true
		c.GraphDescriptions = map[string]string{"described": "Said so.", "empty": ""}
	})
	described, undescribed, empty := reg(dev, "described"), reg(dev, "undescribed"), reg(dev, "empty")
	want(dev, described, "Said so.", 1)
	want(dev, undescribed, nil, 1)
	want(dev, empty, "", 1)
	if mine := create(t, dev, map[string]any{"graph_id": "described"}); mine["description"] != nil {
		t.Fatalf("an assistant made of the graph has description %#v; want none", mine["description"])
	}
	dev.Must(http.StatusOK, "PATCH", "/assistants/"+described, map[string]any{"description": "patched"})
	want(dev, described, "patched", 2)
	reg(dev, "described")
	want(dev, described, "Said so.", 2)
	reg(dev, "described") // unchanged
	want(dev, described, "Said so.", 2)

	// A server without descriptions (weft serve) leaves them alone.
	plain := servertest.StartWith(t, dsn, func(c *server.Config) { c.NoBuiltinGraphs = true })
	reg(plain, "described")
	want(plain, described, "Said so.", 2)
	plain.Must(http.StatusOK, "PATCH", "/assistants/"+undescribed, map[string]any{"description": "mine"})
	reg(plain, "undescribed")
	want(plain, undescribed, "mine", 2)
	want(plain, reg(plain, "new"), nil, 1)
}
