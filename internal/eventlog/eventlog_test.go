package eventlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/checkpoints/serde"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
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
	if _, err := checkpoints.Put(ctx, db, checkpoints.Config{ThreadID: tid.String()}, cp, checkpoints.Metadata{"step": 1}, changed); err != nil {
		t.Fatal(err)
	}
	// What the run streams: the values as a reader sees them (LangChain
	// envelopes normalised, as external workers' events are), plus a
	// default the checkpoint does not hold.
	seen := jsonv.Clone(map[string]any(vals)).(map[string]any)
	seen["lc"] = serde.NormalizeLC(seen["lc"])
	seen["raw"] = []byte{0, 1, 2, 250}
	seen["unset"] = []any{}
	// A task wrote the tricky values (the envelope as the JS saver writes
	// it); its updates event shows them as a reader sees them. (The first
	// updates event also shows "unset", which the task did not write: it
	// stays whole.)
	written := jsonv.Clone(map[string]any(seen)).(map[string]any)
	delete(written, "unset")
	var writes []checkpoints.Write
	for i, k := range slices.Sorted(maps.Keys(written)) {
		writes = append(writes, checkpoints.Write{TaskID: "task-1", Channel: k, Value: vals[k], Idx: i})
	}
	writes = append(writes, checkpoints.Write{TaskID: "task-1", Channel: "branch:to:next", Idx: len(writes)})
	if err := checkpoints.PutWrites(ctx, db, checkpoints.Config{ThreadID: tid.String(), CheckpointID: cp.ID}, writes); err != nil {
		t.Fatal(err)
	}
	events := []eventlog.Event{
		{Name: "values", Data: seen},
		{Name: "values|sub:1", Data: seen},
		{Name: "checkpoints", Data: map[string]any{"config": map[string]any{"configurable": map[string]any{"checkpoint_id": cp.ID}}, "values": seen, "next": []string{"x"}}},
		{Name: "debug", Data: map[string]any{"type": "checkpoint", "step": 1, "payload": map[string]any{"values": seen, "metadata": map[string]any{"step": 1}}}},
		{Name: "debug", Data: map[string]any{"type": "task", "payload": map[string]any{"values": seen}}},
		{Name: "updates", Data: map[string]any{"node": seen}},
		{Name: "updates", Data: map[string]any{"node": written}},
	}
	rows, err := eventlog.Encode(events, []eventlog.Checkpoint{{ID: cp.ID, Values: vals, Changed: changed}},
		[]eventlog.Writes{{ID: cp.ID, Writes: writes}}, eventlog.Options{MinBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantRef := []bool{true, true, true, true, false, false, true}
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
		if row.Ref != nil && row.Name == "updates" {
			var ref eventlog.Ref
			_ = json.Unmarshal(row.Ref, &ref)
			if !slices.Equal(ref.Keys, []string{"lc", "messages", "nested", "numbers", "raw"}) || ref.ID != cp.ID || ref.Task != "task-1" ||
				!slices.Equal(ref.Path, []string{"node"}) || string(row.Data) != `{"node":{}}` {
				t.Fatalf("event %d: ref %s, rest %s", i, row.Ref, row.Data)
			}
		} else if row.Ref != nil {
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
	// A reference stored before the root namespace and the top-level path
	// were left out ({"ns": "", "path": []}) renders the same.
	old := json.RawMessage(rows[0].Data)
	oldRef := []byte(`{"ns": "", "id": "` + cp.ID + `", "path": [], "keys": ["lc", "messages", "nested", "numbers", "raw"]}`)
	if err := eventlog.NewRenderer(-1).Render(ctx, db, tid, []eventlog.Item{{RunID: tid, Seq: 1, Data: &old, Ref: &oldRef}}); err != nil {
		t.Fatal(err)
	}
	if full, _ := json.Marshal(events[0].Data); oldRef != nil || !bytes.Equal(old, jsonbOf(t, db, full)) {
		t.Fatalf("old-form reference rendered %s", old)
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
		{"matches a", map[string]any{"m": big, "n": "old"}, eventlog.Options{}, `{"id":"a","keys":["m","n"]}`},
		{"matches b (k unchanged there: not referenced)", map[string]any{"m": big + "!", "k": big}, eventlog.Options{}, `{"id":"b","keys":["m"]}`},
		{"differs", map[string]any{"m": big + "?"}, eventlog.Options{}, ""},
		{"below MinBytes", map[string]any{"n": "old"}, eventlog.Options{}, ""},
		{"small but MinBytes 1", map[string]any{"n": "old"}, eventlog.Options{MinBytes: 1}, `{"id":"a","keys":["n"]}`},
		{"never", map[string]any{"m": big}, eventlog.Options{MinBytes: -1}, ""},
		{"raw LangChain envelope (a reader normalises it)", map[string]any{"m": big, "lc": envelope()}, eventlog.Options{}, `{"id":"a","keys":["m"]}`},
		{"normalised LangChain envelope", map[string]any{"m": big, "lc": serde.NormalizeLC(envelope())}, eventlog.Options{}, `{"id":"a","keys":["lc","m"]}`},
	}
	for _, c := range cases {
		rows, err := eventlog.Encode([]eventlog.Event{{Name: "values", Data: c.data}}, cps, nil, c.opt)
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
	// An external worker's event of plain JSON arrives as JSON text (see
	// wire.Event): it is referenced alike, or kept as it came.
	for _, c := range []struct{ data, ref string }{
		{`{"n": "old", "m": "` + big + `"}`, `{"id":"a","keys":["m","n"]}`},
		{`{"m": "` + big + `?"}`, ""},
	} {
		rows, err := eventlog.Encode([]eventlog.Event{{Name: "values", Data: json.RawMessage(c.data)}}, cps, nil, eventlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if string(rows[0].Ref) != c.ref || c.ref != "" && string(rows[0].Data) != `{}` {
			t.Errorf("JSON text %.40s: ref %s, data %.40s, want ref %s", c.data, rows[0].Ref, rows[0].Data, c.ref)
		}
		if c.ref == "" && !bytes.Equal(rows[0].Data, jsonv.Must(json.RawMessage(c.data))) {
			t.Errorf("JSON text %.40s: whole data %.40s", c.data, rows[0].Data)
		}
	}
	// The chunks of a streamed message as JSON text share their metadata.
	md := `{"langgraph_node": "agent", "langgraph_step": 1, "tags": [], "run_id": "r"}`
	chunks := []eventlog.Event{{Name: "messages", Data: json.RawMessage(`[{"content": "a"}, ` + md + `]`)},
		{Name: "messages", Data: json.RawMessage(`[{"content": "b"}, ` + md + `]`)}}
	rows, err := eventlog.Encode(chunks, nil, nil, eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Ref != nil || string(rows[1].Ref) != `{"prev":1}` || string(rows[1].Data) != `[{"content":"b"}]` {
		t.Errorf("JSON text chunks: %s %s / %s %s", rows[0].Data, rows[0].Ref, rows[1].Data, rows[1].Ref)
	}
	// The caller's data is left as it is.
	data := map[string]any{"m": big}
	if _, err := eventlog.Encode([]eventlog.Event{{Name: "values", Data: data}}, cps, nil, eventlog.Options{}); err != nil || data["m"] != big {
		t.Fatalf("data changed: %v", err)
	}
}

// An updates event is stored as a task reference only when one task of the
// commit, in the event's namespace, wrote each key of the node's update
// exactly once, as the event shows it, worth TaskMinBytes (or a smaller
// MinBytes).
func TestEncodeUpdatesReferencesOnlyWhatMatches(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("y", 2000)
	msg := func(content string) []any {
		return []any{map[string]any{"type": "ai", "content": content, "id": "m1"}}
	}
	envelope := []any{map[string]any{"lc": json.Number("1"), "type": "constructor", "id": []any{"langchain_core", "messages", "AIMessage"},
		"kwargs": map[string]any{"content": big, "id": "m2"}}}
	w := func(task, ch string, v any, idx int) checkpoints.Write {
		return checkpoints.Write{TaskID: task, Channel: ch, Value: v, Idx: idx}
	}
	batches := []eventlog.Writes{
		{ID: "p", Writes: []checkpoints.Write{
			w("t1", "messages", msg(big), 0), w("t1", "branch:to:b", nil, 1),
			w("t2", "messages", msg(big+"2"), 0), w("t2", "count", json.Number("2"), 1),
			w("t3", "messages", msg(big+"3"), 0), w("t3", "messages", msg(big+"3"), 1),
			w("t4", "messages", envelope, 0),
			w("t5", "messages", msg("tiny"), 0),
		}},
		{NS: "sub:1", ID: "q", Writes: []checkpoints.Write{w("s1", "messages", msg(big+"sub"), 0)}},
	}
	upd := func(node string, obj map[string]any) map[string]any { return map[string]any{node: obj} }
	cases := []struct {
		name   string
		event  string
		data   map[string]any
		writes []eventlog.Writes
		opt    eventlog.Options
		ref    string // "" whole
	}{
		{"matches t1", "updates", upd("a", map[string]any{"messages": msg(big)}), batches, eventlog.Options{},
			`{"id":"p","task":"t1","path":["a"],"keys":["messages"]}`},
		{"matches t2, both keys", "updates", upd("b", map[string]any{"messages": msg(big + "2"), "count": json.Number("2")}), batches, eventlog.Options{},
			`{"id":"p","task":"t2","path":["b"],"keys":["count","messages"]}`},
		{"a key the task did not write", "updates", upd("b", map[string]any{"messages": msg(big + "2"), "other": 1}), batches, eventlog.Options{}, ""},
		{"a key written twice", "updates", upd("c", map[string]any{"messages": msg(big + "3")}), batches, eventlog.Options{}, ""},
		{"a value that differs", "updates", upd("a", map[string]any{"messages": msg(big + "?")}), batches, eventlog.Options{}, ""},
		{"a number written otherwise", "updates", upd("b", map[string]any{"messages": msg(big + "2"), "count": json.Number("2.0")}), batches, eventlog.Options{}, ""},
		{"a write in another namespace", "updates", upd("s", map[string]any{"messages": msg(big + "sub")}), batches, eventlog.Options{}, ""},
		{"a subgraph's update, its namespace's write", "updates|sub:1", upd("s", map[string]any{"messages": msg(big + "sub")}), batches, eventlog.Options{},
			`{"ns":"sub:1","id":"q","task":"s1","path":["s"],"keys":["messages"]}`},
		{"a root write for a subgraph's update", "updates|sub:1", upd("a", map[string]any{"messages": msg(big)}), batches, eventlog.Options{}, ""},
		{"the envelope as a reader normalises it", "updates", upd("d", map[string]any{"messages": serde.NormalizeLC(jsonv.Clone(envelope))}), batches, eventlog.Options{},
			`{"id":"p","task":"t4","path":["d"],"keys":["messages"]}`},
		{"the raw envelope", "updates", upd("d", map[string]any{"messages": envelope}), batches, eventlog.Options{}, ""},
		{"writes not in the commit", "updates", upd("a", map[string]any{"messages": msg(big)}), nil, eventlog.Options{}, ""},
		{"below TaskMinBytes", "updates", upd("e", map[string]any{"messages": msg("tiny")}), batches, eventlog.Options{}, ""},
		{"small but MinBytes 1", "updates", upd("e", map[string]any{"messages": msg("tiny")}), batches, eventlog.Options{MinBytes: 1},
			`{"id":"p","task":"t5","path":["e"],"keys":["messages"]}`},
		{"a MinBytes above TaskMinBytes", "updates", upd("a", map[string]any{"messages": msg(big)}), batches, eventlog.Options{MinBytes: 4096},
			`{"id":"p","task":"t1","path":["a"],"keys":["messages"]}`},
		{"never", "updates", upd("a", map[string]any{"messages": msg(big)}), batches, eventlog.Options{MinBytes: -1}, ""},
		{"two nodes", "updates", map[string]any{"a": map[string]any{"messages": msg(big)}, "b": map[string]any{}}, batches, eventlog.Options{}, ""},
		{"an interrupt", "updates", map[string]any{"__interrupt__": map[string]any{"messages": msg(big)}}, batches, eventlog.Options{}, ""},
		{"a values event", "values", map[string]any{"messages": msg(big)}, batches, eventlog.Options{}, ""},
	}
	for _, c := range cases {
		rows, err := eventlog.Encode([]eventlog.Event{{Name: c.event, Data: c.data}}, nil, c.writes, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if string(rows[0].Ref) != c.ref {
			t.Errorf("%s: ref %s, want %s", c.name, rows[0].Ref, c.ref)
		}
		switch {
		case c.ref == "" && !bytes.Equal(rows[0].Data, jsonv.Must(c.data)):
			t.Errorf("%s: whole data %s", c.name, rows[0].Data)
		case c.ref != "" && bytes.Contains(rows[0].Data, []byte(big)):
			t.Errorf("%s: stored rest %s", c.name, rows[0].Data)
		}
	}
	// An external worker's event of plain JSON arrives as JSON text (see
	// wire.Event): it is referenced alike, or kept as it came.
	for _, c := range []struct {
		data, ref string
	}{
		{`{"b": {"count": 2, "messages": [{"type": "ai", "content": "` + big + `2", "id": "m1"}]}}`,
			`{"id":"p","task":"t2","path":["b"],"keys":["count","messages"]}`},
		{`{"b": {"count": 2.0, "messages": [{"type": "ai", "content": "` + big + `2", "id": "m1"}]}}`, ""},
	} {
		rows, err := eventlog.Encode([]eventlog.Event{{Name: "updates", Data: json.RawMessage(c.data)}}, nil, batches, eventlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if string(rows[0].Ref) != c.ref || c.ref != "" && string(rows[0].Data) != `{"b":{}}` {
			t.Errorf("JSON text %.40s: ref %s, data %.40s, want ref %s", c.data, rows[0].Ref, rows[0].Data, c.ref)
		}
		if c.ref == "" && !bytes.Equal(rows[0].Data, jsonv.Must(json.RawMessage(c.data))) {
			t.Errorf("JSON text %.40s: whole data %.40s", c.data, rows[0].Data)
		}
	}
}

// jsonbOf is doc as PostgreSQL's jsonb returns it.
func jsonbOf(t *testing.T, db postgres.DBTX, doc []byte) json.RawMessage {
	t.Helper()
	var out json.RawMessage
	if err := db.QueryRow(t.Context(), `SELECT $1::jsonb`, string(doc)).Scan(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
