package state

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/checkpoints"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// TestAppendJSONMatchesEncodingJSON reads checkpoints whose message lists
// are stored per element (lists of 1 KB or more) and whose messages hold
// what encoding/json escapes ('<', '>', '&', U+2028, U+2029) or nothing of
// the kind, and checks that the state's own encoding (AppendJSON, used by
// the state and history responses) is byte for byte what encoding/json
// writes for the same state — through WriteJSON and ArrayPage too — and
// that the canonical lists took the copying path.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	db := pgtest.Pool(t)
	ctx := context.Background()
	cfg := checkpoints.Config{ThreadID: "encode"}
	versions := map[string]string{}
	var plain, escaped []any
	for i := range 40 {
		plain = append(plain, map[string]any{"type": "human", "id": fmt.Sprint("p", i), "content": fmt.Sprintf("message %d — “quoted” \\ %s", i, strings.Repeat("lorem ipsum ", 4))})
		text := fmt.Sprintf("<b>%d</b> & more", i)
		if i%2 == 1 {
			text = fmt.Sprintf("line\u2028separator\u2029 %d", i)
		}
		escaped = append(escaped, map[string]any{"type": "ai", "id": fmt.Sprint("e", i), "content": text + strings.Repeat(" pad", 10)})
		values := map[string]any{"messages": plain[: i+1 : i+1], "escaped": escaped[: i+1 : i+1], "n": i, "note": "a<b"}
		nv := map[string]string{}
		for ch := range values {
			nv[ch] = checkpoints.NextVersion(versions[ch])
			versions[ch] = nv[ch]
		}
		cp := checkpoints.Checkpoint{ID: checkpoints.NewCheckpointID(i - 1), ChannelValues: values,
			ChannelVersions: maps.Clone(versions), VersionsSeen: map[string]map[string]string{}}
		next, err := checkpoints.Put(ctx, db, cfg, cp, checkpoints.Metadata{"source": "loop", "step": i - 1, "html": "<&>"}, nv)
		if err != nil {
			t.Fatal(err)
		}
		cfg = next
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM checkpoint_blobs WHERE thread_id = 'encode' AND type = 'weft_list'`).Scan(&n); err != nil || n < 20 {
		t.Fatalf("%d lists stored per element (%v)", n, err)
	}
	tuples, err := checkpoints.List(ctx, db, checkpoints.Config{ThreadID: "encode"}, checkpoints.ListOptions{Limit: 10})
	if err != nil || len(tuples) != 10 {
		t.Fatalf("%d tuples, %v", len(tuples), err)
	}
	var page httpx.ArrayPage
	want := []byte("[")
	for i := range tuples {
		st := assemble(&tuples[i], nil)
		if _, ok := st.verbatim["messages"]; !ok {
			t.Fatalf("checkpoint %d: the canonical list was not found verbatim", i)
		}
		if _, ok := st.verbatim["escaped"]; ok {
			t.Fatalf("checkpoint %d: a list with HTML characters was taken as canonical", i)
		}
		ref, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := st.AppendJSON(nil)
		if err != nil || !bytes.Equal(got, ref) {
			t.Fatalf("checkpoint %d: AppendJSON (%v)\n%s\nencoding/json\n%s", i, err, got, ref)
		}
		rec := httptest.NewRecorder()
		httpx.WriteJSON(rec, 200, st)
		var enc bytes.Buffer
		_ = json.NewEncoder(&enc).Encode(st)
		if !bytes.Equal(rec.Body.Bytes(), enc.Bytes()) {
			t.Fatalf("checkpoint %d: WriteJSON differs from json.Encoder", i)
		}
		if _, err := page.Add(st); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			want = append(want, ',')
		}
		want = append(want, enc.Bytes()...)
	}
	rec := httptest.NewRecorder()
	page.Write(rec)
	if want = append(want, "]\n"...); !bytes.Equal(rec.Body.Bytes(), want) {
		t.Fatal("ArrayPage of states differs from the encoder's")
	}
	// A value replaced after the read is encoded, not copied.
	st := assemble(&tuples[0], nil)
	st.Values.(map[string]any)["messages"] = json.RawMessage(`[ "<x>" ]`)
	ref, _ := json.Marshal(st)
	if got, err := st.AppendJSON(nil); err != nil || !bytes.Equal(got, ref) {
		t.Fatalf("replaced value: %s, want %s (%v)", got, ref, err)
	}
}
