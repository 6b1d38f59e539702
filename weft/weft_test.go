package weft

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv("WEFT_TEST_WORKER") != "" {
		// A worker process of TestWorkerKill9.
		r := graph.NewRegistry()
		if err := r.Register(killGraph()); err != nil {
			panic(err)
		}
		WorkerMain(r)
	}
	os.Exit(pgtest.Main(m))
}

// An embedded server serves the program's graphs over the HTTP API: a
// system assistant per graph, runs executed by the in-process workers.
func TestStartServesGraphs(t *testing.T) {
	r := graph.NewRegistry()
	err := r.Register(&graph.Graph{
		ID:       "shout",
		Channels: []graph.Channel{{Name: "text"}},
		Nodes: []graph.Node{{Name: "up", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			s, _ := in.Values["text"].(string)
			return graph.State{"text": strings.ToUpper(s) + "!"}, nil
		}}},
		Edges: []graph.Edge{{From: graph.START, To: "up"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(t.Context(), r, Options{Addr: "127.0.0.1:0", DatabaseURL: pgtest.DSN(t), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	body, _ := json.Marshal(map[string]any{"assistant_id": "shout", "input": map[string]any{"text": "hi"}})
	resp, err := http.Post(srv.URL()+"/runs/wait", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	if out["text"] != "HI!" {
		t.Fatalf("result = %v", out)
	}
	// Only the program's graphs are served.
	resp2, err := http.Post(srv.URL()+"/assistants/search", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var list []map[string]any
	if err := json.NewDecoder(resp2.Body).Decode(&list); err != nil || len(list) != 1 || list[0]["graph_id"] != "shout" {
		t.Fatalf("assistants = %v (%v)", list, err)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	if _, err := Start(t.Context(), nil, Options{Workers: -1}); err == nil {
		t.Fatal("negative workers accepted")
	}
}
