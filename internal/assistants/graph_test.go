package assistants_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/weftdev/weft/internal/assistants"
)

func TestGraphDrawing(t *testing.T) {
	s := start(t)
	aid := create(t, s, map[string]any{"graph_id": "foo_bar"})["assistant_id"].(string)
	for _, ref := range []string{"foo_bar", aid} {
		for _, q := range []string{"", "?xray=false", "?xray=true", "?xray=1", "?xray=5"} {
			g := s.Must(http.StatusOK, "GET", "/assistants/"+ref+"/graph"+q, nil).Map(t)
			wantJSON(t, "foo_bar nodes"+q, field(toList(g["nodes"]), "id"), `["__start__","node_a","node_b","__end__"]`)
			wantJSON(t, "foo_bar edges"+q, g["edges"], `[{"source":"__start__","target":"node_a"},
				{"source":"node_a","target":"node_b"},{"source":"node_b","target":"__end__"}]`)
		}
	}
	g := s.Must(http.StatusOK, "GET", "/assistants/echo_chat/graph", nil).Map(t)
	wantJSON(t, "echo_chat nodes", toList(g["nodes"]), `[{"id":"__start__","type":"schema","data":"__start__"},
		{"id":"echo","type":"runnable","data":{"id":["langgraph","utils","RunnableCallable"],"name":"echo"}},
		{"id":"__end__","type":"schema","data":"__end__"}]`)
	for _, q := range []string{"?xray=0", "?xray=-1", "?xray=abc", "?xray=1.5"} {
		s.Must(http.StatusUnprocessableEntity, "GET", "/assistants/foo_bar/graph"+q, nil)
	}
	s.Must(http.StatusNotFound, "GET", "/assistants/00000000-0000-0000-0000-000000000001/graph", nil)
	s.Must(http.StatusUnprocessableEntity, "GET", "/assistants/nope/graph", nil)
}

func TestSchemas(t *testing.T) {
	s := start(t)
	sc := s.Must(http.StatusOK, "GET", "/assistants/foo_bar/schemas", nil).Map(t)
	if sc["graph_id"] != "foo_bar" {
		t.Fatalf("schemas %v", sc)
	}
	for _, k := range []string{"input_schema", "output_schema", "state_schema"} {
		m := sc[k].(map[string]any)
		if m["type"] != "object" || m["required"] != nil {
			t.Fatalf("%s = %v", k, m)
		}
		wantJSON(t, k+" foo", m["properties"].(map[string]any)["foo"], `{"title":"foo"}`)
		wantJSON(t, k+" bar", m["properties"].(map[string]any)["bar"], `{"title":"bar","type":"array","default":[]}`)
	}
	for _, k := range []string{"config_schema", "context_schema"} {
		m := sc[k].(map[string]any)
		if m["type"] != "object" || len(m["properties"].(map[string]any)) != 0 {
			t.Fatalf("%s = %v", k, m)
		}
	}
	sc = s.Must(http.StatusOK, "GET", "/assistants/"+assistants.SystemID("echo_chat").String()+"/schemas", nil).Map(t)
	msgs := sc["state_schema"].(map[string]any)["properties"].(map[string]any)["messages"].(map[string]any)
	if msgs["type"] != "array" || msgs["items"].(map[string]any)["type"] != "object" {
		t.Fatalf("messages schema %v", msgs)
	}
	s.Must(http.StatusNotFound, "GET", "/assistants/00000000-0000-0000-0000-000000000001/schemas", nil)
}

func TestSubgraphs(t *testing.T) {
	s := start(t)
	for _, p := range []string{"/assistants/foo_bar/subgraphs", "/assistants/echo_chat/subgraphs?recurse=true",
		"/assistants/foo_bar/subgraphs/node_a", "/assistants/echo_chat/subgraphs/x?recurse=1"} {
		r := s.Must(http.StatusOK, "GET", p, nil)
		wantJSON(t, p, r.Map(t), `{}`)
	}
	s.Must(http.StatusUnprocessableEntity, "GET", "/assistants/foo_bar/subgraphs?recurse=maybe", nil)
	s.Must(http.StatusNotFound, "GET", "/assistants/00000000-0000-0000-0000-000000000001/subgraphs", nil)

	// A catalog graph with subgraphs (as an external worker would register
	// one): namespaces filter by level and prefix; xray picks the depth.
	sub := func(title string) assistants.SubgraphSchemas {
		return assistants.SubgraphSchemas{InputSchema: map[string]any{"title": title}}
	}
	err := assistants.GraphUpsert(context.Background(), s.DB, assistants.GraphInfo{
		GraphID:       "nested",
		Source:        "test",
		Drawable:      map[string]any{"nodes": []any{}, "edges": []any{}, "depth": 0},
		XrayDrawables: []any{map[string]any{"depth": 1}, map[string]any{"depth": 2}},
		Subgraphs:     map[string]assistants.SubgraphSchemas{"a": sub("a"), "a|b": sub("a|b"), "c": sub("c")},
	})
	if err != nil {
		t.Fatal(err)
	}
	aid := create(t, s, map[string]any{"graph_id": "nested"})["assistant_id"].(string)
	keys := func(path string) []string {
		t.Helper()
		var out []string
		for k := range s.Must(http.StatusOK, "GET", "/assistants/"+aid+path, nil).Map(t) {
			out = append(out, k)
		}
		return sorted(out)
	}
	wantJSON(t, "top level", keys("/subgraphs"), `["a","c"]`)
	wantJSON(t, "recursive", keys("/subgraphs?recurse=true"), `["a","a|b","c"]`)
	wantJSON(t, "namespace", keys("/subgraphs/a"), `["a"]`)
	wantJSON(t, "namespace recursive", keys("/subgraphs/a?recurse=true"), `["a","a|b"]`)
	wantJSON(t, "unknown namespace", keys("/subgraphs/zz"), `[]`)
	one := s.Must(http.StatusOK, "GET", "/assistants/"+aid+"/subgraphs/c", nil).Map(t)
	wantJSON(t, "schemas", one["c"], `{"input_schema":{"title":"c"},"output_schema":null,"state_schema":null,"config_schema":null,"context_schema":null}`)
	for q, depth := range map[string]float64{"": 0, "?xray=false": 0, "?xray=1": 1, "?xray=2": 2, "?xray=9": 2, "?xray=true": 2} {
		g := s.Must(http.StatusOK, "GET", "/assistants/"+aid+"/graph"+q, nil).Map(t)
		if g["depth"] != depth {
			t.Fatalf("graph%s: %v, want depth %v", q, g, depth)
		}
	}
}

func toList(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, len(l))
	for i, e := range l {
		out[i], _ = e.(map[string]any)
	}
	return out
}

func sorted(s []string) []string {
	if s == nil {
		return []string{}
	}
	slices.Sort(s)
	return s
}
