package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/weft"
)

// goWorkerMain is the -role goworker mode: the soak starts its own binary
// this way as the Go worker process (weft.RunWorker) serving count_go.
func goWorkerMain(url, workerID, execPath string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := openExecLog(execPath, workerID)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft-soak goworker:", err)
		return 1
	}
	reg := graph.NewRegistry()
	if err := reg.Register(countGraph("count_go", l)); err != nil {
		fmt.Fprintln(os.Stderr, "weft-soak goworker:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = weft.RunWorker(ctx, url, reg, weft.WorkerOptions{WorkerID: workerID, Concurrency: 8, Wait: 5 * time.Second, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft-soak goworker:", err)
		return 1
	}
	return 0
}

// countGraph is the Go twin of the JS count graph
// (worker-js/test/fixtures/soak/count.mjs):
//
//	channels: ms (last value, default 50), ask (last value), answer, note, execs (append, default [])
//	START → a → b → c → END
//
// Every node execution is logged first (l.record), then sleeps ms and
// appends its exec id to execs; with ask, b interrupts once and writes the
// resume value to answer.
func countGraph(id string, l *execLog) *graph.Graph {
	node := func(name string) graph.NodeFunc {
		return func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
			exec, err := l.record(in.Run.RunID, in.Run.ThreadID, in.Run.Step, in.Run.Node)
			if err != nil {
				return nil, err
			}
			ms, _ := in.Values["ms"].(float64)
			t := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-t.C:
			}
			out := graph.State{"execs": []any{exec}}
			if ask, _ := in.Values["ask"].(bool); ask && name == "b" {
				answer, err := in.Interrupt(map[string]any{"question": "continue?", "node": name})
				if err != nil {
					return nil, err
				}
				out["answer"] = answer
			}
			return out, nil
		}
	}
	return &graph.Graph{
		ID: id,
		Channels: []graph.Channel{
			{Name: "ms", Kind: graph.LastValue, Default: float64(50)},
			{Name: "ask", Kind: graph.LastValue, Default: false},
			{Name: "answer", Kind: graph.LastValue},
			{Name: "note", Kind: graph.LastValue},
			{Name: "execs", Kind: graph.Append, Default: []any{}},
		},
		Nodes: []graph.Node{{Name: "a", Func: node("a")}, {Name: "b", Func: node("b")}, {Name: "c", Func: node("c")}},
		Edges: []graph.Edge{
			{From: graph.START, To: "a"}, {From: "a", To: "b"}, {From: "b", To: "c"}, {From: "c", To: graph.END},
		},
	}
}
