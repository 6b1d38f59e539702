package main

import (
	"fmt"
	"strings"
	"sync"
)

// Reference figures from the issue, milliseconds: the official JS dev
// server's getState and history(limit 10) on a 500-turn chat (1,000
// messages), and LangGraph's PostgresSaver on a 200-turn chat (400).
const (
	refGetStateMS      = 48.0
	refHistoryMS       = 430.0
	refSaverGetStateMS = 32.0
	refSaverHistoryMS  = 320.0
)

// reference returns the comparison text for a chat of n messages.
func reference(n int, p50, devServerMS, saverMS float64) string {
	switch n {
	case 1000:
		return fmt.Sprintf("%.1fx faster than the JS dev server's %.0f ms at 500 turns", devServerMS/p50, devServerMS)
	case 400:
		return fmt.Sprintf("%.1fx faster than PostgresSaver's %.0f ms at 200 turns", saverMS/p50, saverMS)
	}
	return ""
}

// chatMessage is a ~200-byte message, alternating human and AI.
func chatMessage(i int) map[string]any {
	kind := "human"
	if i%2 == 1 {
		kind = "ai"
	}
	text := fmt.Sprintf("message %d: ", i) + strings.Repeat("lorem ipsum dolor sit amet ", 7)
	return map[string]any{"type": kind, "content": text, "id": fmt.Sprintf("m-%06d", i)}
}

// buildChat makes an echo_chat thread with n checkpoints, each adding one
// message through update_state, and returns the thread id.
func (l *load) buildChat(n int) (string, error) {
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	if err := l.post("/threads", map[string]any{"metadata": map[string]any{"graph_id": "echo_chat", "bench": "weft-load"}}, &th); err != nil {
		return "", err
	}
	for i := range n {
		body := map[string]any{"values": map[string]any{"messages": []any{chatMessage(i)}}, "as_node": "echo"}
		if err := l.post("/threads/"+th.ThreadID+"/state", body, nil); err != nil {
			return "", err
		}
	}
	return th.ThreadID, nil
}

// state measures getState and history(limit 10) on growing chats, and
// update_state throughput.
func (l *load) state() error {
	fmt.Printf("\n== state: getState and history(limit 10) on an echo_chat thread of N checkpoints (one ~200 B message each)\n")
	fmt.Printf("%-12s %8s %9s %9s %8s %8s %8s %s\n", "op", "N", "resp KiB", "requests", "p50 ms", "p90 ms", "p99 ms", "reference (a turn = 2 messages)")
	for _, n := range []int{10, 100, 400, 1000} {
		tid, err := l.buildChat(n)
		if err != nil {
			return err
		}
		stateSize, err := l.getSize("/threads/" + tid + "/state")
		if err != nil {
			return err
		}
		histSize, err := l.getSize("/threads/" + tid + "/history?limit=10")
		if err != nil {
			return err
		}
		res := phase(1, l.duration, l.maxReq, func(int) error { return l.get("/threads/" + tid + "/state") })
		ref := reference(n, res.pct(0.5), refGetStateMS, refSaverGetStateMS)
		fmt.Printf("%-12s %8d %9.1f %9d %8.2f %8.2f %8.2f %s\n", "getState", n, float64(stateSize)/1024, len(res.lat), res.pct(0.5), res.pct(0.9), res.pct(0.99), ref)
		res = phase(1, l.duration, l.maxReq, func(int) error {
			return l.post("/threads/"+tid+"/history", map[string]any{"limit": 10}, nil)
		})
		ref = reference(n, res.pct(0.5), refHistoryMS, refSaverHistoryMS)
		fmt.Printf("%-12s %8d %9.1f %9d %8.2f %8.2f %8.2f %s\n", "history(10)", n, float64(histSize)/1024, len(res.lat), res.pct(0.5), res.pct(0.9), res.pct(0.99), ref)
	}

	fmt.Printf("\n== paging cost alone: history(limit 10) on a foo_bar thread of N checkpoints whose state stays small\n")
	fmt.Printf("%-12s %8s %9s %8s %8s %8s %s\n", "op", "N", "requests", "p50 ms", "p90 ms", "p99 ms", "vs N=10")
	var base float64
	for _, n := range []int{10, 100, 1000, 5000} {
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if err := l.post("/threads", map[string]any{"metadata": map[string]any{"graph_id": "foo_bar", "bench": "weft-load"}}, &th); err != nil {
			return err
		}
		for i := range n {
			if err := l.post("/threads/"+th.ThreadID+"/state", map[string]any{"values": map[string]any{"foo": fmt.Sprint(i)}, "as_node": "node_b"}, nil); err != nil {
				return err
			}
		}
		res := phase(1, l.duration, l.maxReq, func(int) error {
			return l.post("/threads/"+th.ThreadID+"/history", map[string]any{"limit": 10}, nil)
		})
		if n == 10 {
			base = res.pct(0.5)
		}
		fmt.Printf("%-12s %8d %9d %8.2f %8.2f %8.2f %.2fx\n", "history(10)", n, len(res.lat), res.pct(0.5), res.pct(0.9), res.pct(0.99), res.pct(0.5)/base)
	}

	fmt.Printf("\n== update_state throughput: as many foo_bar threads as workers, requests spread round-robin, each update appends to bar\n")
	fmt.Printf("%-12s %5s %9s %9s %8s %8s %8s %8s\n", "op", "conc", "requests", "ops/s", "p50 ms", "p90 ms", "p99 ms", "errors")
	for _, c := range l.levels {
		ids := make([]string, c)
		for w := range ids {
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			if err := l.post("/threads", map[string]any{"metadata": map[string]any{"graph_id": "foo_bar", "bench": "weft-load"}}, &th); err != nil {
				return err
			}
			ids[w] = th.ThreadID
		}
		var mu sync.Mutex
		turn := map[string]int{}
		res := phase(c, l.duration, l.maxReq, func(i int) error {
			tid := ids[i%c]
			mu.Lock()
			turn[tid]++
			k := turn[tid]
			mu.Unlock()
			return l.post("/threads/"+tid+"/state", map[string]any{"values": map[string]any{"foo": fmt.Sprint(k), "bar": []string{fmt.Sprint(k)}}, "as_node": "node_a"}, nil)
		})
		fmt.Printf("%-12s %5d %9d %9.0f %8.2f %8.2f %8.2f %8d\n", "update_state", c, len(res.lat), res.opsPerSec(), res.pct(0.5), res.pct(0.9), res.pct(0.99), res.errs)
	}
	return nil
}
