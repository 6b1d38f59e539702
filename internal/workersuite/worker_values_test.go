package workersuite_test

import (
	"net/http"
	"strings"
	"testing"
)

// A list of two LangChain messages as Python's JsonPlusSerializer writes
// it (type "msgpack", LangGraph's ext types): HumanMessage "hi" (id m1),
// AIMessage "hello" (id m2).
const pyMessagesMsgpack = "kseJBZS9bGFuZ2NoYWluX2NvcmUubWVzc2FnZXMuaHVtYW6sSHVtYW5NZXNzYWdlhqdjb250ZW50omhpsWFkZGl0aW9uYWxfa3dhcmdzgLFyZXNwb25zZV9tZXRhZGF0YYCkdHlwZaVodW1hbqRuYW1lwKJpZKJtMbNtb2RlbF92YWxpZGF0ZV9qc29ux7MFlLpsYW5nY2hhaW5fY29yZS5tZXNzYWdlcy5haalBSU1lc3NhZ2WJp2NvbnRlbnSlaGVsbG+xYWRkaXRpb25hbF9rd2FyZ3OAsXJlc3BvbnNlX21ldGFkYXRhgKR0eXBlomFppG5hbWXAomlkom0yqnRvb2xfY2FsbHOQsmludmFsaWRfdG9vbF9jYWxsc5CudXNhZ2VfbWV0YWRhdGHAs21vZGVsX3ZhbGlkYXRlX2pzb24="

func serialized(serde, blob string) map[string]any {
	return map[string]any{"lc": 2, "type": "serialized", "serde": serde, "blob": blob}
}

// A worker may commit values it serialized itself, as LangGraph's Python
// saver does: msgpack is stored as it came (type "msgpack", PostgresSaver's
// row) and read back as JSON (messages as message dicts); pickle, another
// type or a blob that does not decode is refused with 422 naming it, and
// nothing of the commit is stored.
func TestWorkerCommitsSerializedValues(t *testing.T) {
	s := external(t, nil)
	s.Must(http.StatusOK, "POST", "/dispatch/graphs", jsGraph)
	tid := newThread(t, s)
	run := create(t, s, tid, map[string]any{"assistant_id": "js_echo"})
	c := claimOne(t, s, "js_echo")
	v1 := "00000000000000000000000000000001.0.1"
	commit := func(status int, id string, messages any, write any) map[string]any {
		cp := map[string]any{"v": 4, "id": id, "ts": "2026-11-23T00:00:00.000Z",
			"channel_values": map[string]any{"messages": messages}, "channel_versions": map[string]any{"messages": v1},
			"versions_seen": map[string]any{}}
		return s.Must(status, "POST", "/dispatch/"+c.Dispatch.DispatchID+"/commit", map[string]any{"claim_token": c.ClaimToken,
			"checkpoints": []any{map[string]any{"parent_checkpoint_id": "", "checkpoint": cp,
				"metadata": map[string]any{"source": "input", "step": -1, "run_id": run["run_id"]}, "new_versions": map[string]any{"messages": v1}}},
			"writes": []any{map[string]any{"checkpoint_ns": "", "checkpoint_id": id,
				"writes": []any{map[string]any{"task_id": "t1", "channel": "n", "idx": 0, "value": write}}}}}).Map(t)
	}
	for _, bad := range []struct {
		messages, write any
		want            string
	}{
		{serialized("pickle", "gASVCgAAAAAAAAB9lIwBeJRLAXMu"), 1, `"pickle"`},
		{[]any{}, serialized("pickle", "gASVCgAAAAAAAAB9lIwBeJRLAXMu"), `"pickle"`},
		{serialized("marshal", "AA=="), 1, `"marshal"`},
		{serialized("msgpack", "not base64!"), 1, "base64"},
		{serialized("msgpack", "wc=="), 1, "does not decode"}, // 0xc1: never used in msgpack
	} {
		body := commit(http.StatusUnprocessableEntity, "1f000000-0000-6000-8000-00000000000f", bad.messages, bad.write)
		if d, _ := body["detail"].(string); !strings.Contains(d, bad.want) {
			t.Errorf("refusal %q does not say %s", d, bad.want)
		}
	}
	var n int
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM checkpoints WHERE thread_id = $1`, tid).Scan(&n); err != nil || n != 0 {
		t.Fatalf("refused commits stored %d checkpoints (%v)", n, err)
	}

	commit(http.StatusOK, "1f000000-0000-6000-8000-000000000001", serialized("msgpack", pyMessagesMsgpack), serialized("json", "NDI="))
	var typ string
	if err := s.DB.QueryRow(t.Context(), `SELECT type FROM checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages'`, tid).Scan(&typ); err != nil || typ != "msgpack" {
		t.Fatalf("messages stored as %q (%v), want msgpack", typ, err)
	}
	if err := s.DB.QueryRow(t.Context(), `SELECT type FROM checkpoint_writes WHERE thread_id = $1 AND channel = 'n'`, tid).Scan(&typ); err != nil || typ != "json" {
		t.Fatalf("write stored as %q (%v), want json", typ, err)
	}
	state := s.Must(http.StatusOK, "GET", "/threads/"+tid+"/state", nil).Map(t)
	msgs := state["values"].(map[string]any)["messages"].([]any)
	var got []string
	for _, m := range msgs {
		m := m.(map[string]any)
		got = append(got, m["type"].(string)+":"+m["content"].(string)+":"+m["id"].(string))
	}
	if strings.Join(got, ",") != "human:hi:m1,ai:hello:m2" {
		t.Fatalf("messages %s", js(msgs))
	}
}
