package graph

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// START and END are the reserved pseudo-node names of every graph, spelled as
// LangGraph spells them on the wire ("next", drawable graphs, as_node).
// An edge from START names the entry nodes; an edge to END ends that branch.
const (
	START = "__start__"
	END   = "__end__"
)

// Sentinel errors. Every error this package returns for a bad graph, a bad
// update or an unknown node wraps one of them, so callers can map them to HTTP
// statuses with errors.Is (ErrInvalidUpdate and ErrUnknownNode are the
// client's fault, ErrInvalidGraph is a programming error in a graph).
var (
	// ErrInvalidGraph reports a structural problem found by Validate, or a
	// router that returned a target it did not declare.
	ErrInvalidGraph = errors.New("invalid graph")
	// ErrInvalidUpdate reports an update that cannot be applied: an unknown
	// channel key, a non-list write to an Append channel, a malformed message,
	// the removal of a message id that does not exist.
	ErrInvalidUpdate = errors.New("invalid update")
	// ErrUnknownNode reports a node name the graph does not have (for example
	// an update_state as_node that names no node).
	ErrUnknownNode = errors.New("unknown node")
)

// Node is a named step of a graph. Its body is Func, which returns a
// partial update (see NodeFunc), or Command, which also says where to go
// next (see CommandFunc); exactly one of them is set.
type Node struct {
	// Name is unique within the graph and must not be START, END or a
	// channel name (LangGraph forbids a node named like a state key).
	Name string
	// Func is the body of a plain node.
	Func NodeFunc
	// Command is the body of a node that routes itself with Command.Goto.
	Command CommandFunc
	// Ends declares every node (or END) a Command node's Goto may name
	// (LangGraph's ends / Command[Literal[...]]): Validate checks them and
	// counts them for reachability, Drawable draws them as conditional
	// edges. Only allowed with Command.
	Ends []string
}

// Router chooses where a conditional edge goes. It receives the state after
// the source node's update was applied and returns zero or more targets, each
// of which must be listed in the edge's Targets (END included when used).
// A router must treat values as read-only and must be deterministic: the
// executor may call it again when it recomputes "next" for a checkpoint.
type Router func(values State) ([]string, error)

// Edge connects nodes. A static edge has From and To. A conditional edge has
// From, Route and Targets (the complete set of nodes Route may return; it is
// what Validate checks reachability against and what Drawable draws) and
// leaves To empty.
type Edge struct {
	// From is a node name or START.
	From string
	// To is a node name or END; empty for a conditional edge.
	To string
	// Route makes the edge conditional when non-nil.
	Route Router
	// Targets declares every value Route may return (node names or END).
	Targets []string
}

// Conditional reports whether e is a conditional edge.
func (e Edge) Conditional() bool { return e.Route != nil }

// Graph is the definition of a built-in graph: its state channels, its nodes
// and the edges between them. It is plain data so graphs can be written as
// literals; build it completely, check it with Validate (Registry.Register
// does), and do not modify it afterwards: a Graph is then safe for concurrent
// use by any number of runs, because every method only reads it.
type Graph struct {
	// ID is the graph id (the assistant's graph_id), e.g. "foo_bar".
	ID string
	// Channels declares every state key; updates to other keys are rejected.
	Channels []Channel
	// Nodes are drawn and validated in this order.
	Nodes []Node
	// Edges are evaluated by Next in this order.
	Edges []Edge
	// ConfigSchema is the JSON Schema of config.configurable the graph
	// reads, and ContextSchema that of a run's context; GET
	// /assistants/{id}/schemas reports them (nil: an object without
	// properties). They document; the server does not validate runs
	// against them.
	ConfigSchema, ContextSchema map[string]any
	// Language is the runtime a worker runs the graph in: LanguagePython
	// for Python LangGraph, LanguageJS for LangGraph.js, "" for graphs
	// compiled into the server or a Go worker's. It decides how task ids
	// are derived (pregel.TaskID: LangGraph.js's rule unless Python) and
	// the shape of state reads (as the language's official server answers
	// them; Weft's own superset of both for "").
	Language string
	// Subgraphs are the namespaces of the subgraphs a worker's graph
	// declares (nodes that are graphs, nested ones joined with "|", as its
	// runtime finds them): state reads nest a pending task's subgraph state
	// only under such a node, as LangGraph's do. Nil for graphs compiled
	// into the server, which have none.
	Subgraphs []string
}

// Graph.Language values of graphs workers run.
const (
	LanguagePython = "python" // Python LangGraph (weft_worker)
	LanguageJS     = "js"     // LangGraph.js (weft-worker)
)

// Node returns the node called name.
func (g *Graph) Node(name string) (Node, bool) {
	for _, n := range g.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// Next returns the nodes to run after from (a node name or START) has
// written, in edge declaration order, without duplicates and without END; an
// empty result means that branch has finished.
//
// values must be the state after from's update was applied. (LangGraph
// evaluates a branch on the pre-step state plus that node's own writes, not
// the writes of nodes running in parallel with it; an executor that wants that
// exact behaviour passes such a view.) Conditional edges call their Router on
// values; a target the router returns but the edge did not declare is an
// ErrInvalidGraph error. An unknown from is an ErrUnknownNode error.
func (g *Graph) Next(from string, values State) ([]string, error) {
	if from != START {
		if _, ok := g.Node(from); !ok {
			return nil, fmt.Errorf("%w: graph %q has no node %q", ErrUnknownNode, g.ID, from)
		}
	}
	var out []string
	add := func(n string) {
		if n != END && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, e := range g.Edges {
		if e.From != from {
			continue
		}
		if e.Route == nil {
			add(e.To)
			continue
		}
		targets, err := e.Route(values)
		if err != nil {
			return nil, fmt.Errorf("graph %q: routing from %q: %w", g.ID, from, err)
		}
		for _, t := range targets {
			if !slices.Contains(e.Targets, t) {
				return nil, fmt.Errorf("%w: graph %q: router from %q returned undeclared target %q (declared: %s)",
					ErrInvalidGraph, g.ID, from, t, strings.Join(e.Targets, ", "))
			}
			add(t)
		}
	}
	return out, nil
}

// NextAfter is Next followed by a Command's Goto: the nodes to run after
// node from wrote, its edges' targets first, then the Goto targets not
// already there (END dropped). A Goto target not in the node's Ends is an
// ErrInvalidGraph error.
func (g *Graph) NextAfter(from string, values State, gotoNodes []string) ([]string, error) {
	out, err := g.Next(from, values)
	if err != nil || len(gotoNodes) == 0 {
		return out, err
	}
	n, _ := g.Node(from)
	for _, t := range gotoNodes {
		if !slices.Contains(n.Ends, t) {
			return nil, fmt.Errorf("%w: graph %q: node %q went to %q, which is not in its Ends (%s)",
				ErrInvalidGraph, g.ID, from, t, strings.Join(n.Ends, ", "))
		}
		if t != END && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Validate checks the graph's structure and returns every problem found,
// joined, each wrapping ErrInvalidGraph: a missing ID; empty, duplicate or
// reserved channel and node names; a node named like a channel; a node
// without a body or with both Func and Command; Ends on a Func node or
// naming an unknown node; a Default that does not fit its channel kind; an edge whose endpoints
// do not exist (From must be START or a node, To must be END or a node); an
// edge that is both or neither static and conditional; a conditional edge
// without declared Targets or with an unknown target; no edge out of START; a
// node not reachable from START.
func (g *Graph) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: graph %q: %s", ErrInvalidGraph, g.ID, fmt.Sprintf(format, args...)))
	}
	if g.ID == "" {
		bad("empty graph id")
	}
	reserved := func(name string) bool { return name == START || name == END }

	channels := map[string]bool{}
	for _, c := range g.Channels {
		switch {
		case c.Name == "" || reserved(c.Name):
			bad("invalid channel name %q", c.Name)
		case channels[c.Name]:
			bad("duplicate channel %q", c.Name)
		}
		channels[c.Name] = true
		if c.Kind < LastValue || c.Kind > MergeObject {
			bad("channel %q has unknown kind %d", c.Name, int(c.Kind))
		}
		if err := c.checkDefault(); err != nil {
			bad("%v", err)
		}
	}

	nodes := map[string]bool{}
	for _, n := range g.Nodes {
		switch {
		case n.Name == "" || reserved(n.Name):
			bad("invalid node name %q", n.Name)
		case nodes[n.Name]:
			bad("duplicate node %q", n.Name)
		case channels[n.Name]:
			bad("node %q has the name of a channel", n.Name)
		}
		nodes[n.Name] = true
		switch {
		case n.Func == nil && n.Command == nil:
			bad("node %q has neither Func nor Command", n.Name)
		case n.Func != nil && n.Command != nil:
			bad("node %q has both Func and Command", n.Name)
		case n.Func != nil && len(n.Ends) > 0:
			bad("node %q declares Ends without Command", n.Name)
		}
	}

	succ := map[string][]string{}
	startEdges := 0
	for i, e := range g.Edges {
		if e.From != START && !nodes[e.From] {
			bad("edge %d: unknown source %q", i, e.From)
		}
		if e.From == START {
			startEdges++
		}
		targetOK := func(t string) bool { return t == END || nodes[t] }
		switch {
		case e.Route == nil && len(e.Targets) > 0:
			bad("edge %d from %q: Targets given without Route", i, e.From)
		case e.Route == nil:
			if !targetOK(e.To) {
				bad("edge %d from %q: unknown target %q", i, e.From, e.To)
			}
			succ[e.From] = append(succ[e.From], e.To)
		case e.To != "":
			bad("edge %d from %q: both To %q and Route set", i, e.From, e.To)
		case len(e.Targets) == 0:
			bad("conditional edge %d from %q declares no Targets", i, e.From)
		default:
			for _, t := range e.Targets {
				if !targetOK(t) {
					bad("conditional edge %d from %q: unknown target %q", i, e.From, t)
				}
			}
			succ[e.From] = append(succ[e.From], e.Targets...)
		}
	}
	if startEdges == 0 {
		bad("no edge from %s", START)
	}
	for _, n := range g.Nodes {
		for _, t := range n.Ends {
			if t != END && !nodes[t] {
				bad("node %q: unknown end %q", n.Name, t)
			}
		}
		succ[n.Name] = append(succ[n.Name], n.Ends...)
	}

	seen := map[string]bool{START: true}
	queue := []string{START}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, t := range succ[cur] {
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	for _, n := range g.Nodes {
		if n.Name != "" && !seen[n.Name] {
			bad("node %q is not reachable from %s", n.Name, START)
		}
	}
	return errors.Join(errs...)
}

// Drawable returns the graph in the JSON shape of LangGraph's
// GET /assistants/{id}/graph (xray=false):
//
//	{"nodes": [{"id", "type", "data"}], "edges": [{"source", "target", "conditional"?}]}
//
// The first node is START ({"type":"schema","data":"__start__"}), then every
// node as {"type":"runnable","data":{"id":["langgraph","utils","RunnableCallable"],
// "name":<node>}} (the id LangGraph reports for plain function nodes, kept for
// client compatibility), then END when some edge can reach it. A conditional
// edge is drawn as one edge per declared target with "conditional": true;
// static edges omit the key, as LangGraph does. The result is freshly
// allocated JSON-compatible data.
func (g *Graph) Drawable() map[string]any {
	nodes := []any{map[string]any{"id": START, "type": "schema", "data": START}}
	for _, n := range g.Nodes {
		nodes = append(nodes, map[string]any{
			"id":   n.Name,
			"type": "runnable",
			"data": map[string]any{
				"id":   []any{"langgraph", "utils", "RunnableCallable"},
				"name": n.Name,
			},
		})
	}
	type key struct {
		from, to    string
		conditional bool
	}
	var seen []key
	edges := []any{}
	usesEnd := false
	add := func(k key) {
		if slices.Contains(seen, k) {
			return
		}
		seen = append(seen, k)
		usesEnd = usesEnd || k.to == END
		e := map[string]any{"source": k.from, "target": k.to}
		if k.conditional {
			e["conditional"] = true
		}
		edges = append(edges, e)
	}
	for _, e := range g.Edges {
		if e.Route == nil {
			add(key{e.From, e.To, false})
			continue
		}
		for _, t := range e.Targets {
			add(key{e.From, t, true})
		}
	}
	for _, n := range g.Nodes {
		for _, t := range n.Ends {
			add(key{n.Name, t, true})
		}
	}
	if usesEnd {
		nodes = append(nodes, map[string]any{"id": END, "type": "schema", "data": END})
	}
	return map[string]any{"nodes": nodes, "edges": edges}
}
