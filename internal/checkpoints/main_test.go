package checkpoints_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	. "github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// fixtureRow is one line of testdata/*.jsonl: a row of one of the three
// tables exactly as ROWS.md shows it (blob = its UTF-8 text, or null).
type fixtureRow struct {
	Table        string          `json:"table"`
	ThreadID     string          `json:"thread_id"`
	NS           string          `json:"checkpoint_ns"`
	CheckpointID string          `json:"checkpoint_id"`
	ParentID     *string         `json:"parent_checkpoint_id"`
	Checkpoint   json.RawMessage `json:"checkpoint"`
	Metadata     json.RawMessage `json:"metadata"`
	Channel      string          `json:"channel"`
	Version      string          `json:"version"`
	Type         *string         `json:"type"`
	Blob         *string         `json:"blob"`
	TaskID       string          `json:"task_id"`
	Idx          int             `json:"idx"`
}

// loadFixture inserts the rows of a testdata file with raw SQL, as the JS
// saver wrote them.
func loadFixture(t testing.TB, db *pgxpool.Pool, name string) {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r fixtureRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var blob []byte
		if r.Blob != nil {
			blob = []byte(*r.Blob)
		}
		switch r.Table {
		case "checkpoints":
			_, err = db.Exec(ctx, `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.ThreadID, r.NS, r.CheckpointID, r.ParentID, r.Type, string(r.Checkpoint), string(r.Metadata))
		case "checkpoint_blobs":
			_, err = db.Exec(ctx, `INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
				VALUES ($1, $2, $3, $4, $5, $6)`, r.ThreadID, r.NS, r.Channel, r.Version, r.Type, blob)
		case "checkpoint_writes":
			// The JS saver's INSERT names no task_path: the column default applies.
			_, err = db.Exec(ctx, `INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, r.ThreadID, r.NS, r.CheckpointID, r.TaskID, r.Idx, r.Channel, r.Type, blob)
		default:
			t.Fatalf("unknown table %q", r.Table)
		}
		if err != nil {
			t.Fatalf("insert %s row: %v", r.Table, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// countRows returns the number of rows of table for thread.
func countRows(t testing.TB, db *pgxpool.Pool, table, thread string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE thread_id = $1`, thread).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// jsonEqual compares two values by their JSON text (json.Number and Go
// numbers alike).
func jsonEqual(t testing.TB, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("%s:\n got  %s\n want %s", what, g, w)
	}
}

// mustList is List failing the test on error.
func mustList(t testing.TB, db *pgxpool.Pool, cfg Config, opt ListOptions) []Tuple {
	t.Helper()
	tu, err := List(context.Background(), db, cfg, opt)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return tu
}

func ids(tuples []Tuple) []string {
	out := make([]string, len(tuples))
	for i, t := range tuples {
		out[i] = t.Config.CheckpointID
	}
	return out
}
