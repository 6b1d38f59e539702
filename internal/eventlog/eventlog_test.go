package eventlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// tricky are channel values whose JSON text differs between Go's encoder
// and jsonb's output in every way we know of: key order, HTML and
// Unicode escapes, number forms, bytes.
func tricky() map[string]any {
	return map[string]any{
		"messages": []any{
			map[string]any{"type": "human", "content": "a <b> & \"c\" \\ \n\t \u0001 é \u2028 😀", "id": "m1"},
			map[string]any{"type": "ai", "content": strings.Repeat("long reply ", 40), "id": "m2", "zz": nil, "a": []any{}},
		},
		"numbers": []any{0.1, 1e21, 1e-7, -0.0, 9007199254740993.0, json.Number("1.50"), json.Number("1e2"), json.Number("-0"), int64(42)},
		"nested":  map[string]any{"bb": map[string]any{"a": true, "ccc": false}, "a": map[string]any{}, "": "empty key"},
		"raw":     []byte{0, 1, 2, 250},
		"lc": []any{map[string]any{"lc": json.Number("1"), "type": "constructor", "id": []any{"langchain_core", "messages", "HumanMessage"},
			"kwargs": map[string]any{"content": "hi", "id": "m3"}}},
	}
}

func TestRenderedEqualsWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := pgtest.Pool(t)
	tid := uuid.New()
	vals := tricky()
	cp := checkpoints.Checkpoint{ID: checkpoints.NewCheckpointID(1), ChannelValues: vals, ChannelVersions: map[string]string{}}
	changed := map[string]string{}
	for k := range vals {
		cp.ChannelVersions[k] = "00000000000000000000000000000001.0000000000000001"
		changed[k] = cp.ChannelVersions[k]
	}
	if _, err := checkpoints.CheckpointPut(ctx, db, checkpoints.Config{ThreadID: tid.String()}, cp, checkpoints.Metadata{"step": 1}, changed); err != nil {
		t.Fatal(err)
	}
	// What the run streams: the values as a reader sees them (LangChain
	// envelopes normalised, as external workers' events are), plus a
	// default the checkpoint does not hold.
	seen := jsonv.Clone(map[string]any(vals)).(map[string]any)
	seen["lc"] = serde.NormalizeLC(seen["lc"])
	seen["raw"] = []byte{0, 1, 2, 250}
	seen["unset"] = []any{}
	events := []eventlog.Event{
		{Name: "values", Data: seen},
		{Name: "values|sub:1", Data: seen},
		{Name: "checkpoints", Data: map[string]any{"config": map[string]any{"configurable": map[string]any{"checkpoint_id": cp.ID}}, "values": seen, "next": []string{"x"}}},
		{Name: "debug", Data: map[string]any{"type": "checkpoint", "step": 1, "payload": map[string]any{"values": seen, "metadata": map[string]any{"step": 1}}}},
		{Name: "debug", Data: map[string]any{"type": "task", "payload": map[string]any{"values": seen}}},
		{Name: "updates", Data: map[string]any{"node": seen}},
	}
	rows, err := eventlog.Encode(events, []eventlog.Checkpoint{{ID: cp.ID, Values: vals, Changed: changed}}, eventlog.Options{MinBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantRef := []bool{true, true, true, true, false, false}
	r := eventlog.NewRenderer(0)
	for i, row := range rows {
		if (row.Ref != nil) != wantRef[i] {
			t.Fatalf("event %d (%s): ref %s, want ref %v", i, row.Name, row.Ref, wantRef[i])
		}
		var want json.RawMessage
		full, _ := json.Marshal(events[i].Data)
		if err := db.QueryRow(ctx, `SELECT $1::jsonb`, string(full)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if row.Ref != nil {
			var ref eventlog.Ref
			_ = json.Unmarshal(row.Ref, &ref)
			// Every channel the checkpoint holds as the event shows it is
			// referenced; "unset" (not in the checkpoint) stays in the rest.
			if !slices.Equal(ref.Keys, []string{"lc", "messages", "nested", "numbers", "raw"}) || ref.ID != cp.ID {
				t.Fatalf("event %d: ref %s", i, row.Ref)
			}
			if bytes.Contains(row.Data, []byte("long reply")) || !bytes.Contains(row.Data, []byte("unset")) {
				t.Fatalf("event %d: stored rest %s", i, row.Data)
			}
		}
		var data json.RawMessage
		if err := db.QueryRow(ctx, `SELECT $1::jsonb`, string(row.Data)).Scan(&data); err != nil {
			t.Fatal(err)
		}
		ref := row.Ref
		if err := r.Render(ctx, db, tid, []eventlog.Item{{RunID: tid, Seq: int64(i + 1), Data: &data, Ref: &ref}}); err != nil {
			t.Fatal(err)
		}
		if ref != nil || !bytes.Equal(data, want) {
			t.Fatalf("event %d (%s) rendered\n%s\nwant\n%s", i, row.Name, data, want)
		}
	}
	// The second rendering of an event comes from the cache, the same.
	data, ref := json.RawMessage(rows[0].Data), rows[0].Ref
	if err := r.Render(ctx, db, tid, []eventlog.Item{{RunID: tid, Seq: 1, Data: &data, Ref: &ref}}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := r.Stats(); hits != 1 {
		t.Fatalf("cache hits %d", hits)
	}
}

// A reference is written only for values the checkpoint written in the
// same commit holds as the event shows them, worth MinBytes.
func TestEncodeReferencesOnlyWhatMatches(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2000)
	envelope := func() map[string]any {
		return map[string]any{"lc": json.Number("1"), "type": "constructor", "id": []any{"langchain_core", "messages", "HumanMessage"},
			"kwargs": map[string]any{"content": "hi", "id": "m3"}}
	}
	cps := []eventlog.Checkpoint{
		{ID: "a", Values: map[string]any{"m": big, "n": "old", "lc": envelope()}, Changed: map[string]string{"m": "1", "n": "1", "lc": "1"}},
		{ID: "b", Values: map[string]any{"m": big + "!", "k": big}, Changed: map[string]string{"m": "2"}},
	}
	cases := []struct {
		name string
		data map[string]any
		opt  eventlog.Options
		ref  string // "" whole
	}{
		{"matches a", map[string]any{"m": big, "n": "old"}, eventlog.Options{}, `{"ns":"","id":"a","path":[],"keys":["m","n"]}`},
		{"matches b (k unchanged there: not referenced)", map[string]any{"m": big + "!", "k": big}, eventlog.Options{}, `{"ns":"","id":"b","path":[],"keys":["m"]}`},
		{"differs", map[string]any{"m": big + "?"}, eventlog.Options{}, ""},
		{"below MinBytes", map[string]any{"n": "old"}, eventlog.Options{}, ""},
		{"small but MinBytes 1", map[string]any{"n": "old"}, eventlog.Options{MinBytes: 1}, `{"ns":"","id":"a","path":[],"keys":["n"]}`},
		{"never", map[string]any{"m": big}, eventlog.Options{MinBytes: -1}, ""},
		{"raw LangChain envelope (a reader normalises it)", map[string]any{"m": big, "lc": envelope()}, eventlog.Options{}, `{"ns":"","id":"a","path":[],"keys":["m"]}`},
		{"normalised LangChain envelope", map[string]any{"m": big, "lc": serde.NormalizeLC(envelope())}, eventlog.Options{}, `{"ns":"","id":"a","path":[],"keys":["lc","m"]}`},
	}
	for _, c := range cases {
		rows, err := eventlog.Encode([]eventlog.Event{{Name: "values", Data: c.data}}, cps, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if string(rows[0].Ref) != c.ref {
			t.Errorf("%s: ref %s, want %s", c.name, rows[0].Ref, c.ref)
		}
		if c.ref == "" && !bytes.Equal(rows[0].Data, jsonv.Must(c.data)) {
			t.Errorf("%s: whole data %s", c.name, rows[0].Data)
		}
	}
	// The caller's data is left as it is.
	data := map[string]any{"m": big}
	if _, err := eventlog.Encode([]eventlog.Event{{Name: "values", Data: data}}, cps, eventlog.Options{}); err != nil || data["m"] != big {
		t.Fatalf("data changed: %v", err)
	}
}
