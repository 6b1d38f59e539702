// Package cptest helps tests write and read checkpoints the way a graph
// does: a Line puts checkpoints along one branch of a thread, WriteChat a
// long chat thread for benchmarks. It is for
// the tests of internal/checkpoints and of the packages built on it
// (internal/messagelog), so that they share one simulation of a graph's
// writes.
package cptest

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/checkpoints"
)

// Line simulates a graph writing checkpoints along one branch: each step
// sets some channels, clears others (consumed triggers) and puts a
// checkpoint whose parent is the previous one.
type Line struct {
	T    testing.TB
	DB   *pgxpool.Pool
	Cfg  checkpoints.Config // thread, namespace, current parent
	CP   checkpoints.Checkpoint
	Step int
}

// NewLine starts a branch of thread in namespace ns with no checkpoint.
func NewLine(t testing.TB, db *pgxpool.Pool, thread, ns string) *Line {
	return &Line{T: t, DB: db, Cfg: checkpoints.Config{ThreadID: thread, NS: ns}, Step: -2,
		CP: checkpoints.Checkpoint{ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}}
}

// Fork returns a line continuing from tuple tu (a new branch).
func (l *Line) Fork(tu *checkpoints.Tuple) *Line {
	step, _ := tu.Metadata.Step()
	return &Line{T: l.T, DB: l.DB, Cfg: tu.Config, CP: tu.Checkpoint, Step: step}
}

// Put writes the next checkpoint: set holds new values, clear names
// channels that get a new version without a value.
func (l *Line) Put(source string, set map[string]any, clear ...string) checkpoints.Config {
	l.T.Helper()
	l.Step++
	cp := l.CP
	cp.ID = checkpoints.NewCheckpointID(l.Step)
	cp.ChannelValues = maps.Clone(cp.ChannelValues)
	cp.ChannelVersions = maps.Clone(cp.ChannelVersions)
	nv := map[string]string{}
	for ch, v := range set {
		nv[ch] = checkpoints.NextVersion(cp.ChannelVersions[ch])
		cp.ChannelValues[ch] = v
	}
	for _, ch := range clear {
		nv[ch] = checkpoints.NextVersion(cp.ChannelVersions[ch])
		delete(cp.ChannelValues, ch)
	}
	maps.Copy(cp.ChannelVersions, nv)
	out := MustPut(l.T, l.DB, l.Cfg, cp, checkpoints.Metadata{"source": source, "step": l.Step, "parents": map[string]any{}}, nv)
	l.Cfg, l.CP = out, cp
	return out
}

// MustPut is checkpoints.Put failing the test on error.
func MustPut(t testing.TB, db *pgxpool.Pool, cfg checkpoints.Config, cp checkpoints.Checkpoint, md checkpoints.Metadata, nv map[string]string) checkpoints.Config {
	t.Helper()
	out, err := checkpoints.Put(context.Background(), db, cfg, cp, md, nv)
	if err != nil {
		t.Fatalf("CheckpointPut: %v", err)
	}
	return out
}

// MustGet is checkpoints.GetTuple failing the test on error.
func MustGet(t testing.TB, db *pgxpool.Pool, cfg checkpoints.Config) *checkpoints.Tuple {
	t.Helper()
	tu, err := checkpoints.GetTuple(context.Background(), db, cfg)
	if err != nil {
		t.Fatalf("checkpoints.GetTuple(%+v): %v", cfg, err)
	}
	return tu
}

// WriteChat writes a thread of n checkpoints shaped like a chat: every
// checkpoint appends one ~120-byte message to "messages" (so the latest
// value holds n messages, stored as a full copy per version like the JS
// saver does), bumps a "step" counter and carries one pending write. It
// returns the checkpoint ids, oldest first.
func WriteChat(b testing.TB, db *pgxpool.Pool, n int) []string {
	b.Helper()
	ctx := context.Background()
	tx, err := db.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	cfg := checkpoints.Config{ThreadID: "bench"}
	cp := checkpoints.Checkpoint{ChannelValues: map[string]any{}, ChannelVersions: map[string]string{}, VersionsSeen: map[string]map[string]string{}}
	var messages []any
	out := make([]string, 0, n)
	for i := range n {
		typ := []string{"human", "ai"}[i%2]
		messages = append(messages, map[string]any{"type": typ, "id": fmt.Sprintf("msg-%06d", i),
			"content": fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 8))})
		cp.ID = checkpoints.NewCheckpointID(i - 1)
		cp.ChannelValues = map[string]any{"messages": messages[:len(messages):len(messages)], "step": i}
		nv := map[string]string{"messages": checkpoints.NextVersion(cp.ChannelVersions["messages"]), "step": checkpoints.NextVersion(cp.ChannelVersions["step"])}
		versions := map[string]string{}
		for k, v := range cp.ChannelVersions {
			versions[k] = v
		}
		for k, v := range nv {
			versions[k] = v
		}
		cp.ChannelVersions = versions
		next, err := checkpoints.Put(ctx, tx, cfg, cp, checkpoints.Metadata{"source": "loop", "step": i - 1}, nv)
		if err != nil {
			b.Fatal(err)
		}
		if err := checkpoints.PutWrites(ctx, tx, next, []checkpoints.Write{{TaskID: "task", Channel: "messages", Value: messages[len(messages)-1:]}}); err != nil {
			b.Fatal(err)
		}
		cfg = next
		out = append(out, next.CheckpointID)
	}
	if err := tx.Commit(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	return out
}
