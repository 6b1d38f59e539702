package graph

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Registry holds the graphs a server can run, by graph id. It is safe for
// concurrent use. The server builds one at start and creates a
// system assistant for each id.
type Registry struct {
	mu     sync.RWMutex
	graphs map[string]*Graph
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{graphs: map[string]*Graph{}}
}

// Register validates g and adds it. It fails when g is invalid (the
// Validate error) or when a graph with the same ID is already registered.
// The registry keeps g itself; g must not be modified afterwards.
func (r *Registry) Register(g *Graph) error {
	if g == nil {
		return fmt.Errorf("%w: nil graph", ErrInvalidGraph)
	}
	if err := g.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.graphs[g.ID]; dup {
		return fmt.Errorf("%w: graph %q is already registered", ErrInvalidGraph, g.ID)
	}
	r.graphs[g.ID] = g
	return nil
}

// Lookup returns the graph with the given id.
func (r *Registry) Lookup(id string) (*Graph, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	g, ok := r.graphs[id]
	return g, ok
}

// IDs returns the registered graph ids in ascending order (the order used in
// "Expected one of: …" error messages and by system-assistant creation).
func (r *Registry) IDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.graphs))
}
