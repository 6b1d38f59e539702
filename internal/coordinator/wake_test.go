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

// A claimer's poll skips its claim only right after a claim of its own
// that left nothing to take, with no queue notification since that claim
// began, and only once.
func TestDrainedClaims(t *testing.T) {
	s := NewService(nil, nil, nil, slog.New(slog.DiscardHandler), Config{})
	a, b := drainedKey("w", []string{"x"}), drainedKey("w", nil)
	if s.drained.unchanged(a) {
		t.Fatal("no claim yet: want a claim")
	}
	s.drained.record(a, s.drained.generation())
	if s.drained.unchanged(b) {
		t.Fatal("another filter of the same worker: want a claim")
	}
	if !s.drained.unchanged(a) {
		t.Fatal("right after an empty claim: want the wait")
	}
	if s.drained.unchanged(a) {
		t.Fatal("the record is used once")
	}
	gen := s.drained.generation()
	s.WakeGraph("x") // arrives while the claim runs
	s.drained.record(a, gen)
	if s.drained.unchanged(a) {
		t.Fatal("a notification since the claim began: want a claim")
	}
	s.drained.record(a, s.drained.generation())
	s.Wake(1)
	if s.drained.unchanged(a) {
		t.Fatal("a wake of every claimer since: want a claim")
	}
}
