package coordinator

import (
	"log/slog"
	"testing"

	"github.com/google/uuid"
)

func fired(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A dispatch notification wakes the claimers that may take its graph: the
// ones without a filter and the ones naming it; a wake of unknown graph
// wakes every claimer. Pools hear of every wake with its graph.
func TestWakeGraphWakesOnlyMatchingClaimers(t *testing.T) {
	s := NewService(nil, nil, nil, slog.New(slog.DiscardHandler), Config{})
	anyGraph := s.queue.SubscribeAll([]uuid.UUID{queueGrew})
	js := s.queue.SubscribeAll([]uuid.UUID{graphKey("a_js"), graphKey("b_js")})
	var pool []string
	s.OnWork(func(n int, graphID string) { pool = append(pool, graphID) })

	s.WakeGraph("foo_bar")
	if !fired(anyGraph) || fired(js) {
		t.Fatal("foo_bar: want only the unfiltered claimer woken")
	}
	s.WakeGraph("b_js")
	if !fired(anyGraph) || !fired(js) {
		t.Fatal("b_js: want both claimers woken")
	}
	s.Wake(1)
	if !fired(anyGraph) || !fired(js) {
		t.Fatal("a wake of any graph: want both claimers woken")
	}
	s.WakeGraph("")
	if !fired(anyGraph) || !fired(js) {
		t.Fatal("a notification without a graph: want both claimers woken")
	}
	if got := len(pool); got != 4 || pool[0] != "foo_bar" || pool[1] != "b_js" || pool[2] != "" || pool[3] != "" {
		t.Fatalf("pools told %q", pool)
	}
	s.queue.UnsubscribeAll([]uuid.UUID{graphKey("a_js"), graphKey("b_js")}, js)
	s.WakeGraph("a_js")
	if fired(js) {
		t.Fatal("woken after UnsubscribeAll")
	}
}
