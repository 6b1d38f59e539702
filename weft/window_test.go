package weft

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

// windowGraph's node reads the last 3 messages and the stored summary
// before them (NodeInput.Window) and reports what it saw.
func windowGraph() *graph.Graph {
	return &graph.Graph{
		ID:       "window_chat",
		Channels: []graph.Channel{{Name: "messages", Kind: graph.Messages, Default: []any{}}, {Name: "seen"}},
		Nodes: []graph.Node{{Name: "read", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			w, err := in.Window(ctx, "messages", 3)
			if err != nil {
				return nil, err
			}
			var ids []any
			for _, m := range w.Messages {
				ids = append(ids, m.(map[string]any)["id"])
			}
			seen := map[string]any{"total": w.Total, "ids": ids, "summary": nil}
			if w.Summary != nil {
				seen["summary"] = map[string]any{"from": w.Summary.FromSeq, "to": w.Summary.ToSeq, "value": w.Summary.Value}
			}
			return graph.State{"seen": seen}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "read"}},
	}
}

func TestNodeReadsWindowAndSummary(t *testing.T) {
	r := graph.NewRegistry()
	if err := r.Register(windowGraph()); err != nil {
		t.Fatal(err)
	}
	srv, err := Start(t.Context(), r, Options{Addr: "127.0.0.1:0", DatabaseURL: pgtest.DSN(t), Workers: 1, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Shutdown(context.Background()) }()
	call := func(method, path string, body any, out any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, srv.URL()+path, bytes.NewReader(b))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: status %d", method, path, resp.StatusCode)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	var th map[string]any
	call("POST", "/threads", map[string]any{"metadata": map[string]any{"graph_id": "window_chat"}}, &th)
	tid := th["thread_id"].(string)
	var msgs []any
	for i := range 40 {
		msgs = append(msgs, map[string]any{"type": "human", "id": fmt.Sprint("m", i), "content": strings.Repeat("long conversation ", 12)})
	}
	var upd map[string]any
	call("POST", "/threads/"+tid+"/state", map[string]any{"as_node": "read", "values": map[string]any{"messages": msgs}}, &upd)
	// Removing m0 shifts positions: m38, the window's first message, is at
	// position 38 but keeps seq 39, which the node's summary lookup finds.
	call("POST", "/threads/"+tid+"/state", map[string]any{"as_node": "read", "values": map[string]any{"messages": []any{
		map[string]any{"type": "remove", "id": "m0"}}}}, &upd)
	var sum map[string]any
	call("POST", "/threads/"+tid+"/summaries", map[string]any{"from_seq": 1, "to_seq": 38, "summary": "up to m37"}, &sum)
	call("POST", "/threads/"+tid+"/summaries", map[string]any{"from_seq": 1, "to_seq": 30, "summary": "a narrower one"}, &sum)
	call("POST", "/threads/"+tid+"/summaries", map[string]any{"from_seq": 39, "to_seq": 40, "summary": "inside the window"}, &sum)
	var out map[string]any
	call("POST", "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "window_chat",
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "id": "q", "content": "and now?"}}}}, &out)
	want := `{"ids":["m38","m39","q"],"summary":{"from":1,"to":38,"value":"up to m37"},"total":40}`
	if got, _ := json.Marshal(out["seen"]); string(got) != want {
		t.Fatalf("the node saw %s, want %s", got, want)
	}
}
