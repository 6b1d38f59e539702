package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// testCheckpoint is what the reference executor leaves behind after each
// run: the raw values, the nodes still to run, the pending interrupt (if the
// run paused) and the resume values collected per node.
type testCheckpoint struct {
	values    State
	next      []string
	interrupt *Interrupt
	resume    map[string][]any
	steps     int
}

// invoke runs g from input to END (or to an interrupt) with the reference
// executor.
func invoke(ctx context.Context, g *Graph, input State) (testCheckpoint, error) {
	values, err := g.Apply(State{}, input)
	if err != nil {
		return testCheckpoint{}, err
	}
	next, err := g.Next(START, values)
	if err != nil {
		return testCheckpoint{}, err
	}
	return runLoop(ctx, g, testCheckpoint{values: values, next: next, resume: map[string][]any{}})
}

// resumeRun answers cp's pending interrupt with value and continues.
func resumeRun(ctx context.Context, g *Graph, cp testCheckpoint, value any) (testCheckpoint, error) {
	if cp.interrupt == nil {
		return cp, errors.New("nothing to resume")
	}
	resume := map[string][]any{}
	for n, r := range cp.resume {
		resume[n] = slices.Clone(r)
	}
	for _, n := range cp.next {
		resume[n] = append(resume[n], value)
	}
	cp.resume, cp.interrupt = resume, nil
	return runLoop(ctx, g, cp)
}

// runLoop is a minimal Pregel loop: run every node of cp.next in parallel on
// the same snapshot, apply their updates in next order, compute the next
// nodes, repeat. An interrupt in any node stops the loop with cp.next intact
// (this executor, unlike LangGraph, does not keep the writes of the step's
// other nodes; all of them re-run on resume).
func runLoop(ctx context.Context, g *Graph, cp testCheckpoint) (testCheckpoint, error) {
	for len(cp.next) > 0 {
		if cp.steps++; cp.steps > 25 {
			return cp, errors.New("recursion limit")
		}
		snapshot := g.Values(cp.values)
		updates := make([]State, len(cp.next))
		errs := make([]error, len(cp.next))
		var wg sync.WaitGroup
		for i, name := range cp.next {
			node, ok := g.Node(name)
			if !ok {
				return cp, fmt.Errorf("no node %q", name)
			}
			wg.Go(func() {
				updates[i], errs[i] = node.Func(ctx, NewNodeInput(snapshot, cp.resume[name]))
			})
		}
		wg.Wait()
		for _, err := range errs {
			var intr *Interrupt
			if errors.As(err, &intr) {
				cp.interrupt = intr
				return cp, nil
			}
		}
		if err := errors.Join(errs...); err != nil {
			return cp, err
		}
		values := cp.values
		for _, u := range updates {
			var err error
			if values, err = g.Apply(values, u); err != nil {
				return cp, err
			}
		}
		var next []string
		for _, name := range cp.next {
			delete(cp.resume, name)
			ns, err := g.Next(name, values)
			if err != nil {
				return cp, err
			}
			for _, n := range ns {
				if !slices.Contains(next, n) {
					next = append(next, n)
				}
			}
		}
		cp.values, cp.next = values, next
	}
	return cp, nil
}
