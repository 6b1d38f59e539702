package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/reencrypt"
	"github.com/weftdev/weft/internal/server/servertest"
)

// longChat runs echo_chat turns until the thread's messages pass 1 KB and
// returns the thread and its values as GET /threads/{id} shows them.
func longChat(t *testing.T, s *servertest.Server) (string, json.RawMessage) {
	t.Helper()
	tid := s.Must(http.StatusOK, "POST", "/threads", map[string]any{}).Map(t)["thread_id"].(string)
	for range 3 {
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "echo_chat",
			"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": strings.Repeat("words ", 40)}}}})
	}
	var th struct {
		Values json.RawMessage `json:"values"`
	}
	s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).JSON(t, &th)
	return tid, th.Values
}

// threadRow is the stored projection of a thread: values as text and
// values_refs (nil when none).
func threadRow(t *testing.T, s *servertest.Server, tid string) (values string, refs []byte) {
	t.Helper()
	if err := s.DB.QueryRow(context.Background(), `SELECT "values"::text, values_refs FROM threads WHERE thread_id = $1`, tid).Scan(&values, &refs); err != nil {
		t.Fatal(err)
	}
	return values, refs
}

// runInputs are the stored inputs of a thread's runs (JSON text, "" for
// none) and how many of its runs hold an input reference.
func runInputs(t *testing.T, s *servertest.Server, tid string) (inputs []string, refs int) {
	t.Helper()
	if err := s.DB.QueryRow(context.Background(), `SELECT array_agg(coalesce(kwargs->>'input', '') ORDER BY created_at),
		count(*) FILTER (WHERE kwargs ? 'input_ref') FROM runs WHERE thread_id = $1`, tid).Scan(&inputs, &refs); err != nil {
		t.Fatal(err)
	}
	return inputs, refs
}

// normJSON is JSON text s re-encoded (object keys sorted).
func normJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// runsRead is GET /threads/{id}/runs.
func runsRead(t *testing.T, s *servertest.Server, tid string) string {
	t.Helper()
	return string(s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs", nil).Body)
}

// With encryption at rest a thread's values projection and its runs'
// inputs are stored whole and sealed (SQL cannot open sealed blobs); those
// written by reference while encryption was off read with the key on, and
// weft reencrypt stores them whole and sealed before it seals the blobs
// they referenced.
func TestEncryptionThreadValuesRefs(t *testing.T) {
	t.Parallel()
	sealed := startWithKeys(t, pgtest.DSN(t), keyring(t, testKeyA))
	tid, _ := longChat(t, sealed)
	if values, refs := threadRow(t, sealed, tid); refs != nil || !crypt.IsEnvelope([]byte(values)) {
		t.Fatalf("with a key the projection is stored as %.200s, references %s: want it whole and sealed", values, refs)
	}
	if inputs, refs := runInputs(t, sealed, tid); refs != 0 || !crypt.IsEnvelope([]byte(inputs[0])) {
		t.Fatalf("with a key the runs' inputs are stored as %.200s, %d by reference: want them whole and sealed", inputs, refs)
	}

	dsn := pgtest.DSN(t)
	plain := startWithKeys(t, dsn, nil)
	tid, want := longChat(t, plain)
	if _, refs := threadRow(t, plain, tid); refs == nil {
		t.Fatal("without a key the long chat's projection holds no reference")
	}
	if _, refs := runInputs(t, plain, tid); refs != 3 {
		t.Fatalf("without a key %d of the long chat's 3 runs hold an input reference", refs)
	}
	wantRuns := runsRead(t, plain, tid)
	if err := plain.Srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	kr := keyring(t, testKeyA)
	s := startWithKeys(t, dsn, kr)
	get := func() json.RawMessage {
		var th struct {
			Values json.RawMessage `json:"values"`
		}
		s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).JSON(t, &th)
		return th.Values
	}
	if got := get(); string(got) != string(want) {
		t.Fatalf("with the key on, the projection by reference reads %.300s, want %.300s", got, want)
	}
	if got := runsRead(t, s, tid); got != wantRuns {
		t.Fatalf("with the key on, the runs by reference read %.300s, want %.300s", got, wantRuns)
	}
	counts, err := reencrypt.Run(context.Background(), s.DB, kr, 7, nil)
	if err != nil {
		t.Fatal(err)
	}
	if counts[0].Table != "threads" || counts[0].Rewritten == 0 || counts[1].Table != "runs" || counts[1].Rewritten == 0 {
		t.Fatalf("reencrypt: %+v, want the threads and the runs first, rewritten", counts)
	}
	if values, refs := threadRow(t, s, tid); refs != nil || !crypt.IsEnvelope([]byte(values)) {
		t.Fatalf("after reencrypt the projection is stored as %.200s, references %s: want it whole and sealed", values, refs)
	}
	if inputs, refs := runInputs(t, s, tid); refs != 0 || !crypt.IsEnvelope([]byte(inputs[0])) || !crypt.IsEnvelope([]byte(inputs[2])) {
		t.Fatalf("after reencrypt the runs' inputs are stored as %.200s, %d by reference: want them whole and sealed", inputs, refs)
	}
	if got := get(); string(got) != string(want) {
		t.Fatalf("after reencrypt the projection reads %.300s, want %.300s", got, want)
	}
	// A sealed input is opened into its document (in Go's key order, not
	// jsonb's): the same JSON value.
	if got := runsRead(t, s, tid); normJSON(t, got) != normJSON(t, wantRuns) {
		t.Fatalf("after reencrypt the runs read %.300s, want %.300s", got, wantRuns)
	}
	again, err := reencrypt.Run(context.Background(), s.DB, kr, 500, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Rewritten != 0 || again[0].Skipped != 0 || again[1].Rewritten != 0 || again[1].Skipped != 0 {
		t.Fatalf("a second reencrypt rewrote threads or runs: %+v", again[:2])
	}
}
