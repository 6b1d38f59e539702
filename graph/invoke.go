package graph

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// ErrRecursionLimit is returned by Invoke and Resume when a run takes more
// supersteps than its recursion limit.
var ErrRecursionLimit = errors.New("graph: recursion limit reached")

// InvokeOptions configure an in-memory run (Invoke, Resume).
type InvokeOptions struct {
	// Config and Context are handed to every node as NodeInput.Config and
	// NodeInput.Context.
	Config, Context map[string]any
	// RecursionLimit is the most supersteps the run may take (default 25,
	// LangGraph's default).
	RecursionLimit int
	// Stream receives what nodes stream (NodeInput.Custom,
	// NodeInput.MessageChunk) with the streaming node's name; nil drops it.
	Stream func(node, kind string, data any)
}

// Snapshot is where an in-memory run stopped: the graph ended (Next is
// empty) or nodes interrupted (Interrupts is not empty and Next holds the
// nodes that will run again on Resume).
type Snapshot struct {
	// Values is the state without channel defaults (what a checkpoint
	// stores); Graph.Values fills them in.
	Values State
	// Next are the nodes of the superstep still to run.
	Next []string
	// Interrupts are the interrupts raised by the last superstep.
	Interrupts []*Interrupt
	// Steps counts the supersteps run so far (the input step excluded).
	Steps int

	resume map[string][]any    // answers per interrupted node
	done   map[string]*Command // nodes of Next that completed before an interrupt
}

// Invoke runs g in memory from input until it ends, interrupts or fails,
// without a server or a database: the way to unit-test a graph. It follows
// the server's superstep protocol: the nodes of a step run in parallel on
// the same state (channel defaults filled in); each node's next nodes are
// computed on that state plus its own update (then its Command's Goto);
// the step's updates are then reduced into the state in node order, and a
// LastValue channel written by two nodes of one step is an
// ErrInvalidUpdate error. When a node interrupts, the updates of the
// step's other nodes are kept for Resume and the step is not applied.
//
// Unlike the server, Invoke keeps no checkpoints: on error the returned
// Snapshot is the state before the failing step. A node error is returned
// wrapped with the node's name.
func (g *Graph) Invoke(ctx context.Context, input State, opt InvokeOptions) (Snapshot, error) {
	values, err := g.Apply(State{}, input)
	if err != nil {
		return Snapshot{}, err
	}
	next, err := g.Next(START, values)
	if err != nil {
		return Snapshot{}, err
	}
	return g.run(ctx, Snapshot{Values: values, Next: next}, opt)
}

// Resume answers the interrupts of s with value (every interrupted node
// gets it as the answer to its pending Interrupt call) and continues the
// run. s must come from Invoke or Resume and have interrupts.
func (g *Graph) Resume(ctx context.Context, s Snapshot, value any, opt InvokeOptions) (Snapshot, error) {
	if len(s.Interrupts) == 0 {
		return s, errors.New("graph: resume: the run has no pending interrupt")
	}
	resume := map[string][]any{}
	for n, r := range s.resume {
		resume[n] = slices.Clone(r)
	}
	for _, n := range s.Next {
		if s.done[n] == nil {
			resume[n] = append(resume[n], value)
		}
	}
	s.resume, s.Interrupts = resume, nil
	return g.run(ctx, s, opt)
}

// run is the superstep loop of Invoke and Resume.
func (g *Graph) run(ctx context.Context, s Snapshot, opt InvokeOptions) (Snapshot, error) {
	limit := opt.RecursionLimit
	if limit <= 0 {
		limit = 25
	}
	for len(s.Next) > 0 {
		if s.Steps >= limit {
			return s, fmt.Errorf("%w: %d supersteps", ErrRecursionLimit, limit)
		}
		if err := ctx.Err(); err != nil {
			return s, err
		}
		view := g.Values(s.Values)
		cmds := make([]*Command, len(s.Next))
		errs := make([]error, len(s.Next))
		var wg sync.WaitGroup
		for i, name := range s.Next {
			if c := s.done[name]; c != nil {
				cmds[i] = c
				continue
			}
			node, ok := g.Node(name)
			if !ok {
				return s, fmt.Errorf("%w: graph %q has no node %q", ErrUnknownNode, g.ID, name)
			}
			in := NewNodeInput(view, s.resume[name])
			in.Config, in.Context = opt.Config, opt.Context
			in.Run = RunInfo{GraphID: g.ID, Node: name, Step: s.Steps}
			if opt.Stream != nil {
				in = WithStream(in, func(kind string, data any) { opt.Stream(name, kind, data) })
			}
			wg.Go(func() {
				c, err := node.Call(ctx, in)
				cmds[i], errs[i] = &c, err
			})
		}
		wg.Wait()

		var interrupts []*Interrupt
		for i, err := range errs {
			var intr *Interrupt
			switch {
			case errors.As(err, &intr):
				interrupts = append(interrupts, intr)
			case err != nil:
				return s, fmt.Errorf("graph %q: node %q: %w", g.ID, s.Next[i], err)
			}
		}
		if len(interrupts) > 0 {
			s.Interrupts = interrupts
			s.done = map[string]*Command{}
			for i, name := range s.Next {
				if errs[i] == nil {
					s.done[name] = cmds[i]
				}
			}
			return s, nil
		}

		values := s.Values
		var next []string
		written := map[string]int{}
		for i, name := range s.Next {
			after, err := g.Apply(view, cmds[i].Update)
			if err != nil {
				return s, fmt.Errorf("graph %q: node %q: %w", g.ID, name, err)
			}
			ns, err := g.NextAfter(name, after, cmds[i].Goto)
			if err != nil {
				return s, err
			}
			for _, n := range ns {
				if !slices.Contains(next, n) {
					next = append(next, n)
				}
			}
			for k := range cmds[i].Update {
				if written[k]++; written[k] > 1 {
					if c, _ := g.Channel(k); !c.Reduces() {
						return s, fmt.Errorf("%w: channel %q can receive only one value per step; give it a reducer",
							ErrInvalidUpdate, k)
					}
				}
			}
			if values, err = g.Apply(values, cmds[i].Update); err != nil {
				return s, fmt.Errorf("graph %q: node %q: %w", g.ID, name, err)
			}
		}
		s.Values, s.Next, s.Steps = values, next, s.Steps+1
		s.resume, s.done = nil, nil
	}
	s.Values = maps.Clone(s.Values)
	return s, nil
}
