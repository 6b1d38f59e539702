package graph

import (
	"context"
	"fmt"
)

// Window is the newest part of a list channel as a node reads it with
// NodeInput.Window: the last elements, the list's length, and the summary
// the thread stores for what precedes them (DESIGN §5: summaries are
// records beside the state, never a replacement of it).
type Window struct {
	// Messages are the last elements of the list, oldest first.
	Messages []any
	// Total is the length of the whole list.
	Total int
	// Summary is the widest summary the thread stores for the channel that
	// ends before the window's first element; nil when there is none, or
	// when the node runs without a thread store (Graph.Invoke, a remote
	// worker: read GET /threads/{id}/summaries there).
	Summary *Summary
}

// Summary is a stored summary of the elements of a list channel with seqs
// FromSeq..ToSeq (the seqs of GET /threads/{id}/messages).
type Summary struct {
	FromSeq, ToSeq int64
	// Value is the summary as stored (any JSON).
	Value any
}

// ThreadReader is what an executor gives a node to read its thread's
// stored records beside the state (WithThreadReader). Weft's in-process
// executor provides one backed by the database.
type ThreadReader interface {
	// SummaryBefore returns the widest summary of channel that ends before
	// first, the element at 1-based position pos of the channel's list (nil
	// when there is none).
	SummaryBefore(ctx context.Context, channel string, first any, pos int) (*Summary, error)
}

// WithThreadReader returns in with r answering its Window calls' summary
// lookups (the executor's hook).
func WithThreadReader(in NodeInput, r ThreadReader) NodeInput {
	in.thread = r
	return in
}

// Window returns the last k elements of list channel channel of the
// node's state (k < 1 is an error), the list's length and, when the node
// runs with a thread store, the widest stored summary that ends before the
// window: the context a model needs from a long conversation without
// copying the whole list. The elements are the node's own (do not modify
// them).
func (in NodeInput) Window(ctx context.Context, channel string, k int) (Window, error) {
	if k < 1 {
		return Window{}, fmt.Errorf("graph: window of %d elements: k must be at least 1", k)
	}
	var list []any
	if v, ok := in.Values[channel]; ok && v != nil {
		if list, ok = v.([]any); !ok {
			return Window{}, fmt.Errorf("graph: channel %q is not a list", channel)
		}
	}
	w := Window{Messages: list[max(0, len(list)-k):], Total: len(list)}
	if in.thread != nil && len(w.Messages) < w.Total {
		s, err := in.thread.SummaryBefore(ctx, channel, w.Messages[0], w.Total-len(w.Messages)+1)
		if err != nil {
			return Window{}, err
		}
		w.Summary = s
	}
	return w, nil
}
