package main

import (
	"fmt"
	"sync"
)

// Reference figures from the issue: the official JS dev server (in memory,
// not durable) on this 2-core machine, thread creates per second.
var referenceCreate = map[int]float64{1: 700, 16: 1000}

// threads measures POST /threads and GET /threads/{id}.
func (l *load) threads() {
	fmt.Printf("\n== threads: create and get\n")
	fmt.Printf("%-8s %5s %9s %9s %8s %8s %8s %8s %8s %s\n", "op", "conc", "requests", "ops/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors", "vs JS dev server")
	for _, c := range l.levels {
		var ids []string
		var mu sync.Mutex
		res := phase(c, l.duration, l.maxReq, func(i int) error {
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			if err := l.post("/threads", map[string]any{"metadata": map[string]any{"bench": "weft-load", "n": i}}, &th); err != nil {
				return err
			}
			mu.Lock()
			ids = append(ids, th.ThreadID)
			mu.Unlock()
			return nil
		})
		ref := ""
		if r, ok := referenceCreate[c]; ok {
			ref = fmt.Sprintf("%.2fx of %.0f/s", res.opsPerSec()/r, r)
		}
		res.print("create", c, ref)
		if len(ids) == 0 {
			continue
		}
		res = phase(c, l.duration, l.maxReq, func(i int) error { return l.get("/threads/" + ids[i%len(ids)]) })
		res.print("get", c, "")
	}
}
