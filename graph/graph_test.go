package graph

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func noop(context.Context, NodeInput) (State, error) { return nil, nil }

func cmdNoop(context.Context, NodeInput) (Command, error) { return Command{}, nil }

// routed is a graph with a conditional edge out of "a": to "b" when
// route == "b", to "c" when "c", to both when "both", to END when "end",
// to "nowhere" (undeclared) when "bad".
func routed() *Graph {
	return &Graph{
		ID:       "routed",
		Channels: []Channel{{Name: "route"}},
		Nodes:    []Node{{Name: "a", Func: noop}, {Name: "b", Func: noop}, {Name: "c", Func: noop}},
		Edges: []Edge{
			{From: START, To: "a"},
			{From: "a", Route: func(v State) ([]string, error) {
				switch r := v["route"]; r {
				case "both":
					return []string{"b", "c", "b"}, nil
				case "end":
					return []string{END}, nil
				case "bad":
					return []string{"nowhere"}, nil
				case "err":
					return nil, errors.New("boom")
				default:
					return []string{r.(string)}, nil
				}
			}, Targets: []string{"b", "c", END}},
			{From: "b", To: "c"},
			{From: "b", To: END},
			{From: "c", To: END},
		},
	}
}

// chain is START → node_a → node_b → END.
func chain() *Graph {
	return &Graph{
		ID:       "chain",
		Channels: []Channel{{Name: "foo"}},
		Nodes:    []Node{{Name: "node_a", Func: noop}, {Name: "node_b", Func: noop}},
		Edges:    []Edge{{From: START, To: "node_a"}, {From: "node_a", To: "node_b"}, {From: "node_b", To: END}},
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	g := routed()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		from    string
		route   string
		want    []string
		wantErr error
	}{
		{START, "", []string{"a"}, nil},
		{"a", "b", []string{"b"}, nil},
		{"a", "c", []string{"c"}, nil},
		{"a", "both", []string{"b", "c"}, nil},
		{"a", "end", nil, nil},
		{"b", "", []string{"c"}, nil}, // END excluded
		{"c", "", nil, nil},
		{"a", "bad", nil, ErrInvalidGraph},
		{"zzz", "", nil, ErrUnknownNode},
		{END, "", nil, ErrUnknownNode},
	}
	for _, tc := range tests {
		got, err := g.Next(tc.from, State{"route": tc.route})
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Next(%s, %s) err = %v, want %v", tc.from, tc.route, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Next(%s, %s) = %v, %v; want %v", tc.from, tc.route, got, err, tc.want)
		}
	}
	if _, err := g.Next("a", State{"route": "err"}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("router error not propagated: %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := func() *Graph {
		return &Graph{ID: "g", Channels: []Channel{{Name: "x"}}, Nodes: []Node{{Name: "a", Func: noop}},
			Edges: []Edge{{From: START, To: "a"}, {From: "a", To: END}}}
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("valid graph: %v", err)
	}
	route := func(State) ([]string, error) { return nil, nil }
	tests := []struct {
		name   string
		modify func(g *Graph)
		want   string
	}{
		{"bad edge target", func(g *Graph) { g.Edges = append(g.Edges, Edge{From: "a", To: "nowhere"}) }, `unknown target "nowhere"`},
		{"bad edge source", func(g *Graph) { g.Edges = append(g.Edges, Edge{From: "ghost", To: END}) }, `unknown source "ghost"`},
		{"edge into START", func(g *Graph) { g.Edges = append(g.Edges, Edge{From: "a", To: START}) }, `unknown target "__start__"`},
		{"unreachable node", func(g *Graph) { g.Nodes = append(g.Nodes, Node{Name: "island", Func: noop}) }, `"island" is not reachable`},
		{"no start edge", func(g *Graph) { g.Edges = g.Edges[1:] }, "no edge from __start__"},
		{"conditional without targets", func(g *Graph) { g.Edges = append(g.Edges, Edge{From: "a", Route: route}) }, "declares no Targets"},
		{"conditional unknown target", func(g *Graph) {
			g.Edges = append(g.Edges, Edge{From: "a", Route: route, Targets: []string{"ghost"}})
		}, `unknown target "ghost"`},
		{"both To and Route", func(g *Graph) {
			g.Edges = append(g.Edges, Edge{From: "a", To: END, Route: route, Targets: []string{END}})
		}, "both To"},
		{"targets without route", func(g *Graph) { g.Edges = append(g.Edges, Edge{From: "a", Targets: []string{END}}) }, "Targets given without Route"},
		{"duplicate node", func(g *Graph) { g.Nodes = append(g.Nodes, Node{Name: "a", Func: noop}) }, `duplicate node "a"`},
		{"node named like channel", func(g *Graph) {
			g.Nodes = append(g.Nodes, Node{Name: "x", Func: noop})
			g.Edges = append(g.Edges, Edge{From: "a", To: "x"})
		}, `node "x" has the name of a channel`},
		{"reserved node", func(g *Graph) { g.Nodes = append(g.Nodes, Node{Name: END, Func: noop}) }, `invalid node name "__end__"`},
		{"nil func", func(g *Graph) { g.Nodes[0].Func = nil }, `node "a" has neither Func nor Command`},
		{"func and command", func(g *Graph) { g.Nodes[0].Command = cmdNoop }, `node "a" has both Func and Command`},
		{"ends without command", func(g *Graph) { g.Nodes[0].Ends = []string{END} }, `node "a" declares Ends without Command`},
		{"unknown end", func(g *Graph) {
			g.Nodes[0].Func, g.Nodes[0].Command, g.Nodes[0].Ends = nil, cmdNoop, []string{"ghost"}
		}, `node "a": unknown end "ghost"`},
		{"duplicate channel", func(g *Graph) { g.Channels = append(g.Channels, Channel{Name: "x"}) }, `duplicate channel "x"`},
		{"bad default", func(g *Graph) { g.Channels = append(g.Channels, Channel{Name: "l", Kind: Append, Default: "s"}) }, "default must be a list"},
		{"bad kind", func(g *Graph) { g.Channels = append(g.Channels, Channel{Name: "k", Kind: 42}) }, "unknown kind 42"},
		{"no id", func(g *Graph) { g.ID = "" }, "empty graph id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := ok()
			tc.modify(g)
			err := g.Validate()
			if !errors.Is(err, ErrInvalidGraph) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalidGraph containing %q", err, tc.want)
			}
		})
	}
}

func TestDrawable(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(chain().Drawable())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"edges":[{"source":"__start__","target":"node_a"},{"source":"node_a","target":"node_b"},{"source":"node_b","target":"__end__"}],` +
		`"nodes":[{"data":"__start__","id":"__start__","type":"schema"},` +
		`{"data":{"id":["langgraph","utils","RunnableCallable"],"name":"node_a"},"id":"node_a","type":"runnable"},` +
		`{"data":{"id":["langgraph","utils","RunnableCallable"],"name":"node_b"},"id":"node_b","type":"runnable"},` +
		`{"data":"__end__","id":"__end__","type":"schema"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}

	d := routed().Drawable()
	var cond []string
	for _, e := range d["edges"].([]any) {
		e := e.(map[string]any)
		if e["conditional"] == true {
			cond = append(cond, e["source"].(string)+"->"+e["target"].(string))
		}
	}
	if want := []string{"a->b", "a->c", "a->__end__"}; !reflect.DeepEqual(cond, want) {
		t.Errorf("conditional edges = %v, want %v", cond, want)
	}
}
