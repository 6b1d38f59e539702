package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// indexedStore is a Store with an index (fields ["t"]) on a fresh database
// and a test clock; nothing embeds its pending rows unless the test does.
func indexedStore(t *testing.T) (*Store, *testClock) {
	t.Helper()
	db, err := postgres.Connect(context.Background(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	c := &testClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := NewStore(db, c.Now)
	s.EnableIndex(&IndexConfig{Dims: 2, Embed: "openai:m", Fields: []string{"t"}}, nil)
	return s, c
}

func putText(t *testing.T, s *Store, key, text string) {
	t.Helper()
	v, _ := json.Marshal(map[string]string{"t": text})
	if err := s.Put(context.Background(), PutParams{Namespace: []string{"ns"}, Key: key, Value: v}); err != nil {
		t.Fatal(err)
	}
}

func vecs(n int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out
}

// Concurrent claimers never get the same row.
func TestVectorClaimsAreExclusive(t *testing.T) {
	t.Parallel()
	s, _ := indexedStore(t)
	ctx := context.Background()
	const rows = 60
	for i := range rows {
		putText(t, s, fmt.Sprint(i), fmt.Sprint("text ", i))
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for {
				claimed, err := s.claimVectors(ctx, uuid.New(), time.Minute, 3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(claimed) == 0 {
					return
				}
				mu.Lock()
				for _, c := range claimed {
					seen[c.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != rows {
		t.Fatalf("%d rows claimed, want %d", len(seen), rows)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("row %d claimed %d times", id, n)
		}
	}
}

// A claim's write is refused once the claim is void: the lease ran out and
// another indexer claimed the row, or a put changed its text.
func TestVectorWritesAreFenced(t *testing.T) {
	t.Parallel()
	s, clock := indexedStore(t)
	ctx := context.Background()
	putText(t, s, "a", "alpha")
	tokA := uuid.New()
	claimedA, err := s.claimVectors(ctx, tokA, time.Minute, 10)
	if err != nil || len(claimedA) != 1 {
		t.Fatalf("claim A = %v, %v", claimedA, err)
	}
	if again, _ := s.claimVectors(ctx, uuid.New(), time.Minute, 10); len(again) != 0 {
		t.Fatalf("a leased row was claimed again: %v", again)
	}
	// The lease runs out; B claims the row.
	clock.Advance(61 * time.Second)
	tokB := uuid.New()
	claimedB, err := s.claimVectors(ctx, tokB, time.Minute, 10)
	if err != nil || len(claimedB) != 1 || claimedB[0].ID != claimedA[0].ID {
		t.Fatalf("claim B = %v, %v", claimedB, err)
	}
	if n, err := s.saveVectors(ctx, tokA, claimedA, vecs(1), "openai:m/2"); err != nil || n != 0 {
		t.Fatalf("stale claim A saved %d rows (%v), want 0", n, err)
	}
	if err := s.failVectors(ctx, tokA, ids(claimedA), "late failure", time.Second, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n, err := s.saveVectors(ctx, tokB, claimedB, vecs(1), "openai:m/2"); err != nil || n != 1 {
		t.Fatalf("claim B saved %d rows (%v), want 1", n, err)
	}
	var attempts int
	var lastErr *string
	if err := s.db.QueryRow(ctx, `SELECT attempts, last_error FROM store_vectors`).Scan(&attempts, &lastErr); err != nil {
		t.Fatal(err)
	}
	if attempts != 0 || lastErr != nil {
		t.Fatalf("the stale claim's failure was recorded: attempts %d, error %v", attempts, lastErr)
	}

	// A put with a new text voids the claim in flight.
	putText(t, s, "b", "beta")
	tokC := uuid.New()
	claimedC, err := s.claimVectors(ctx, tokC, time.Minute, 10)
	if err != nil || len(claimedC) != 1 || claimedC[0].Text != "beta" {
		t.Fatalf("claim C = %v, %v", claimedC, err)
	}
	putText(t, s, "b", "gamma")
	if n, err := s.saveVectors(ctx, tokC, claimedC, vecs(1), "openai:m/2"); err != nil || n != 0 {
		t.Fatalf("the claim of the old text saved %d rows (%v), want 0", n, err)
	}
	claimedD, err := s.claimVectors(ctx, uuid.New(), time.Minute, 10)
	if err != nil || len(claimedD) != 1 || claimedD[0].Text != "gamma" {
		t.Fatalf("the new text is not pending at once: %v, %v", claimedD, err)
	}
}

// A failure reschedules the row with a growing backoff.
func TestVectorFailuresBackOff(t *testing.T) {
	t.Parallel()
	s, clock := indexedStore(t)
	ctx := context.Background()
	putText(t, s, "a", "alpha")
	for attempt := 1; attempt <= 4; attempt++ {
		tok := uuid.New()
		claimed, err := s.claimVectors(ctx, tok, time.Minute, 10)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("attempt %d: claim = %v, %v", attempt, claimed, err)
		}
		if err := s.failVectors(ctx, tok, ids(claimed), "boom", 10*time.Second, time.Hour); err != nil {
			t.Fatal(err)
		}
		d, ok, err := s.nextDue(ctx)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		// 10 s × 2^(attempt-1), ±25 %.
		base := 10 * time.Second * time.Duration(1<<(attempt-1))
		if d < base*3/4-time.Millisecond || d > base*5/4+time.Millisecond {
			t.Fatalf("attempt %d: next due in %v, want %v ± 25%%", attempt, d, base)
		}
		if again, _ := s.claimVectors(ctx, uuid.New(), time.Minute, 10); len(again) != 0 {
			t.Fatalf("attempt %d: claimed again before its backoff", attempt)
		}
		clock.Advance(d + time.Millisecond)
	}
}
