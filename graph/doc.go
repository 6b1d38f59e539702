// Package graph is how a Go program defines graphs for Weft: state channels
// with reducers, nodes as functions, static and conditional edges,
// interrupts and Command. A Graph is plain data; register it in a Registry
// and serve it with package weft (an embedded server), or run it in memory
// with Graph.Invoke (tests). The server's executor (a Pregel loop in
// internal/runs) drives the same values; this package knows nothing about
// PostgreSQL, HTTP or runs. Weft's built-in graphs (internal/builtin) and
// examples/agent are written against this API only.
//
// # State and channels
//
// A graph's state is a State (map[string]any of JSON-compatible values)
// keyed by channel name. Each Channel has a Kind, its reducer:
//
//	LastValue    replace (the default; LangGraph's key without reducer)
//	Append       list concatenation (Python operator.add); non-list → error
//	Messages     LangGraph's add_messages over LangChain message dicts
//	MergeObject  shallow object merge; a null value deletes the key
//
// A Channel with a Reduce func uses it instead (LangGraph's
// Annotated[T, reducer]).
//
// Graph.Apply(values, update) reduces a node's (or update_state's) partial
// update into the state and returns a new State; it never mutates its inputs
// and rejects keys that are not channels with an ErrInvalidUpdate error that
// names them (so update_state with a bad key is a 4xx). Graph.Values(raw)
// fills channel defaults for display and for node input. Raw values (without
// defaults) are what a checkpoint stores.
//
// # Messages
//
// AddMessages normalizes every message to the dict LangChain's model_dump
// produces (type, content, id, name, additional_kwargs, response_metadata,
// plus tool_calls/invalid_tool_calls/usage_metadata for ai and
// status/artifact for tool), coercing OpenAI-style {role, content} dicts and
// bare strings, and assigning uuid4 ids to messages without one. It then
// merges by id: same id replaces in place, {"type":"remove","id":X} deletes,
// id RemoveAll clears what came before. Client-supplied ids are kept, so
// useStream's optimistic messages are replaced rather than duplicated.
//
// # Nodes, edges and the superstep protocol
//
// A NodeFunc receives a context and a NodeInput and returns a partial
// update. A node may instead have a CommandFunc, returning a Command: an
// update plus Goto, the nodes to run next (in addition to its edges; each
// declared in the node's Ends). NodeInput carries the state (Values), the
// run's Config (Configurable for config.configurable) and Context, and
// RunInfo (run, thread, assistant ids, node, step). Edges are static (From → To) or conditional (From, Route, declared
// Targets); START and END are the pseudo-nodes "__start__" and "__end__".
// An executor runs a graph like this:
//
//	values, err := g.Apply(State{}, input)        // the "input" checkpoint (step -1)
//	next, err := g.Next(START, values)
//	for len(next) > 0 {                           // one superstep, checkpoint after each
//	    for each node n in next (possibly in parallel):
//	        cmd, err := node.Call(ctx, NewNodeInput(g.Values(values), resume[n]))
//	    if any err is an *Interrupt (errors.Is(err, ErrInterrupted)):
//	        save the checkpoint with next unchanged and the interrupts; stop
//	    if any other err (ctx.Err() on cancellation included): fail; stop
//	    values = Apply each cmd.Update in turn
//	    next = union of g.NextAfter(n, values, cmd.Goto) over the nodes that ran
//	    save a checkpoint (values, next)
//	}
//
// Interrupts follow LangGraph's interrupt(): NodeInput.Interrupt returns the
// resume value for the i-th call when the executor supplied one, otherwise an
// *Interrupt error the node returns. On resume the executor re-runs the node
// from the start with the resume values collected so far. A node's update is
// discarded when it interrupts or fails.
//
// update_state(values, as_node) is Apply followed by Next(as_node, …).
//
// # Graph definitions
//
// A Graph is plain data (ID, Channels, Nodes, Edges) written as a literal,
// checked by Validate (every edge endpoint exists, conditional targets are
// declared, every node is reachable from START), and immutable once
// registered, which makes it safe to share between concurrent runs.
// Drawable renders it in the shape of LangGraph's /assistants/{id}/graph.
//
// # Running a graph
//
// Graph.Invoke and Graph.Resume run a graph in memory with the server's
// superstep semantics and no persistence: the way to unit-test a graph.
// To serve it over the Agent Server API, pass a Registry holding it to
// weft.Start (package github.com/weftdev/weft/weft).
package graph
