package stream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/builtin"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// asks is a graph waiting on two interrupts at once: START → ask_a, ask_b
// (in parallel) → END; each interrupts and writes the answer it was
// resumed with (as JSON) to its channel.
func asks() *graph.Graph {
	ask := func(channel string) graph.NodeFunc {
		return func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			r, err := in.Interrupt(map[string]any{"question": channel + "?"})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(r)
			return graph.State{channel: string(b)}, nil
		}
	}
	return &graph.Graph{
		ID:       "asks",
		Channels: []graph.Channel{{Name: "a"}, {Name: "b"}},
		Nodes:    []graph.Node{{Name: "ask_a", Func: ask("a")}, {Name: "ask_b", Func: ask("b")}},
		Edges: []graph.Edge{{From: graph.START, To: "ask_a"}, {From: graph.START, To: "ask_b"},
			{From: "ask_a", To: graph.END}, {From: "ask_b", To: graph.END}},
	}
}

// runStart sends run.start and returns the run it started (joined), with
// its kwargs, and the thread after it; it fails on an error frame.
func runStart(t *testing.T, s *servertest.Server, tid string, params map[string]any) (run, kwargs, thread map[string]any) {
	t.Helper()
	res := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/commands",
		map[string]any{"id": 1, "method": "run.start", "params": params}).Map(t)
	if res["type"] != "success" {
		t.Fatalf("run.start %v = %v", params, res)
	}
	rid := res["result"].(map[string]any)["run_id"].(string)
	s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid+"/join", nil)
	run = s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)
	kwargs, _ = run["kwargs"].(map[string]any)
	thread = s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t)
	return run, kwargs, thread
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// On a thread waiting on an interrupt, run.start resumes it as
// LangGraph.js's server (1.5) does: any input but null becomes
// command.resume, whole, and the run has no input; with several interrupts
// pending every one gets that value. Null input, a thread that is not
// interrupted, one whose run was cancelled (status interrupted, no
// interrupt) and a run.start with a command of its own start a run as
// before.
func TestProtocolRunStartResumesAPendingInterrupt(t *testing.T) {
	t.Parallel()
	r := builtin.Graphs()
	if err := r.Register(asks()); err != nil {
		t.Fatal(err)
	}
	srv := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) { c.Graphs = r })
	// client is the server for subtest t (its failures are t's).
	client := func(t *testing.T) *servertest.Server { return servertest.Client(t, srv.URL, srv.DB) }

	// interrupted is a hitl thread waiting on its interrupt.
	interrupted := func(t *testing.T, s *servertest.Server) string {
		t.Helper()
		tid := uuid.NewString()
		_, _, th := runStart(t, s, tid, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "x"}})
		if th["status"] != "interrupted" || len(th["interrupts"].(map[string]any)) != 1 {
			t.Fatalf("thread %v", th)
		}
		return tid
	}
	for i, c := range []struct {
		input  any
		answer string // hitl's text(resume)
	}{
		{"yes", "yes"}, {"", ""}, {map[string]any{"ok": 1}, `{"ok":1}`}, {[]any{"a", 1}, `["a",1]`},
		{0, "0"}, {false, "false"}, {map[string]any{"input": "y"}, `{"input":"y"}`},
	} {
		t.Run("input "+strconv.Itoa(i)+" "+js(c.input), func(t *testing.T) {
			t.Parallel()
			s := client(t)
			tid := interrupted(t, s)
			run, kwargs, th := runStart(t, s, tid, map[string]any{"assistant_id": "hitl", "input": c.input})
			if kwargs["input"] != nil || js(kwargs["command"]) != js(map[string]any{"resume": c.input}) {
				t.Errorf("kwargs input %v command %v; want no input, command {resume: %s}", kwargs["input"], kwargs["command"], js(c.input))
			}
			want := map[string]any{"input": "x", "answer": c.answer, "result": "x:" + c.answer}
			if run["status"] != "success" || th["status"] != "idle" || js(th["values"]) != js(want) {
				t.Errorf("run %v, thread %v %v; want success, idle %v", run["status"], th["status"], js(th["values"]), js(want))
			}
		})
	}

	t.Run("null input reruns the interrupted task", func(t *testing.T) {
		t.Parallel()
		s := client(t)
		tid := interrupted(t, s)
		for _, params := range []map[string]any{{"assistant_id": "hitl", "input": nil}, {"assistant_id": "hitl"}} {
			_, kwargs, th := runStart(t, s, tid, params)
			if kwargs["command"] != nil || kwargs["input"] != nil || th["status"] != "interrupted" {
				t.Errorf("%v: kwargs %v, thread %v", params, js(kwargs), th["status"])
			}
		}
	})

	t.Run("a thread that is not interrupted gets the input", func(t *testing.T) {
		t.Parallel()
		s := client(t)
		tid := interrupted(t, s)
		runStart(t, s, tid, map[string]any{"assistant_id": "hitl", "input": "yes"}) // resumed, now idle
		_, kwargs, th := runStart(t, s, tid, map[string]any{"assistant_id": "hitl", "input": map[string]any{"input": "z"}})
		if kwargs["command"] != nil || js(kwargs["input"]) != `{"input":"z"}` || th["status"] != "interrupted" {
			t.Errorf("kwargs %v, thread %v", js(kwargs), th["status"])
		}
		if v := th["values"].(map[string]any); v["input"] != "z" {
			t.Errorf("values %v", js(v))
		}
	})

	t.Run("a cancelled run's thread gets the input", func(t *testing.T) {
		t.Parallel()
		s := client(t)
		tid := uuid.NewString()
		res := s.Must(http.StatusOK, "POST", "/threads/"+tid+"/commands", map[string]any{"id": 1, "method": "run.start",
			"params": map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 60_000, "tag": "one"}}}).Map(t)
		rid := res["result"].(map[string]any)["run_id"].(string)
		deadline := time.Now().Add(20 * time.Second)
		for s.Must(http.StatusOK, "GET", "/threads/"+tid+"/runs/"+rid, nil).Map(t)["status"] != "running" {
			if time.Now().After(deadline) {
				t.Fatal("the run did not start")
			}
			time.Sleep(10 * time.Millisecond)
		}
		s.Must(http.StatusOK, "POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=interrupt", nil)
		if th := s.Must(http.StatusOK, "GET", "/threads/"+tid, nil).Map(t); th["status"] != "interrupted" || len(th["interrupts"].(map[string]any)) != 0 {
			t.Fatalf("cancelled: thread %v %v", th["status"], th["interrupts"])
		}
		_, kwargs, th := runStart(t, s, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"ms": 0, "tag": "two"}})
		if kwargs["command"] != nil || js(kwargs["input"]) != `{"ms":0,"tag":"two"}` || th["status"] != "idle" {
			t.Errorf("kwargs %v, thread %v", js(kwargs), th["status"])
		}
	})

	t.Run("a command of its own is left as it is", func(t *testing.T) {
		t.Parallel()
		s := client(t)
		tid := interrupted(t, s)
		_, kwargs, th := runStart(t, s, tid, map[string]any{"assistant_id": "hitl", "input": "ignored",
			"command": map[string]any{"resume": "from command"}})
		if js(kwargs["command"]) != `{"resume":"from command"}` || th["values"].(map[string]any)["answer"] != "from command" {
			t.Errorf("kwargs %v, values %v", js(kwargs), js(th["values"]))
		}
	})

	t.Run("several interrupts all get the input", func(t *testing.T) {
		t.Parallel()
		s := client(t)
		tid := uuid.NewString()
		_, _, th := runStart(t, s, tid, map[string]any{"assistant_id": "asks", "input": map[string]any{}})
		if th["status"] != "interrupted" || len(th["interrupts"].(map[string]any)) != 2 {
			t.Fatalf("thread %v %v", th["status"], js(th["interrupts"]))
		}
		_, kwargs, th := runStart(t, s, tid, map[string]any{"assistant_id": "asks", "input": map[string]any{"answer": 42}})
		if js(kwargs["command"]) != `{"resume":{"answer":42}}` || th["status"] != "idle" ||
			js(th["values"]) != `{"a":"{\"answer\":42}","b":"{\"answer\":42}"}` {
			t.Errorf("kwargs %v, thread %v %v", js(kwargs), th["status"], js(th["values"]))
		}
	})
}
