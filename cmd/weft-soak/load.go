package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Graphs the load runs: the servers' built-in graphs (in-process workers)
// and the counting graphs of the Go and JS workers.
var (
	builtinGraphs  = []string{"foo_bar", "echo_chat", "slow", "hitl"}
	countingGraphs = []string{"count_go", "count_js"}
)

// input is a run input for graph g; ask makes a counting graph interrupt.
func (c *client) input(g string, ask bool) map[string]any {
	switch g {
	case "foo_bar":
		return map[string]any{"foo": ""}
	case "echo_chat":
		return map[string]any{"messages": []any{map[string]any{"type": "human", "content": "hello soak"}}}
	case "slow":
		// tag is unique per run: the final check finds each run's log
		// entries at most once in the thread.
		return map[string]any{"ms": 50 + c.rng.IntN(150), "tag": fmt.Sprintf("c%d-%d", c.id, c.rng.Uint32())}
	case "hitl":
		return map[string]any{"input": "soak"}
	}
	return map[string]any{"ms": 30 + c.rng.IntN(120), "ask": ask}
}

// action is one kind of work a load client does.
type action struct {
	name   string
	weight int
	run    func(c *client)
}

var actions = []action{
	{"wait", 5, (*client).waitAction},
	{"stream", 3, (*client).streamRandom},
	{"cancel", 2, (*client).cancelAction},
	{"interrupt-resume", 2, (*client).hitlAction},
	{"update-state", 2, (*client).updateStateAction},
	{"multitask", 2, (*client).multitaskAction},
}

func pickAction(rng *rand.Rand) action {
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	n := rng.IntN(total)
	for _, a := range actions {
		if n < a.weight {
			return a
		}
		n -= a.weight
	}
	return actions[0]
}

// anyGraph picks a graph of every kind: counting graphs half of the time.
func (c *client) anyGraph() string {
	if c.rng.IntN(2) == 0 {
		return countingGraphs[c.rng.IntN(len(countingGraphs))]
	}
	return builtinGraphs[c.rng.IntN(len(builtinGraphs))]
}

// runLoad runs n clients until stop is closed, then waits for their
// actions in progress (each bounded by its own deadlines).
func runLoad(f *fleet, n int, seed uint64, st *stats, stop <-chan struct{}) {
	var wg sync.WaitGroup
	var started atomic.Int64
	for i := range n {
		c := &client{id: i, fleet: f, http: &http.Client{}, rng: rand.New(rand.NewPCG(seed, uint64(i)+1)), st: st}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				a := pickAction(c.rng)
				started.Add(1)
				st.mu.Lock()
				st.actions[a.name]++
				st.mu.Unlock()
				a.run(c)
			}
		})
	}
	wg.Wait()
}

// createRun starts a background run and returns its id ("" when the
// server's answer is unknown or a refusal; the status tells which).
func (c *client) createRun(tid string, body map[string]any) (string, int) {
	r := c.do("POST", "/threads/"+tid+"/runs", body, 20*time.Second)
	var run struct {
		RunID string `json:"run_id"`
	}
	if r.status != http.StatusOK || r.decode(&run) != nil {
		return "", r.status
	}
	return run.RunID, r.status
}

// wait creates a run and waits for it (runs/wait); it returns the status
// and the values answered.
func (c *client) wait(tid string, body map[string]any) (int, map[string]any) {
	r := c.do("POST", "/threads/"+tid+"/runs/wait", body, 90*time.Second)
	var values map[string]any
	if r.status == http.StatusOK {
		_ = r.decode(&values)
	}
	return r.status, values
}

// waitAction runs a graph to its end with runs/wait.
func (c *client) waitAction() {
	tid := c.newThread()
	if tid == "" {
		return
	}
	g := c.anyGraph()
	status, values := c.wait(tid, map[string]any{"assistant_id": g, "input": c.input(g, false)})
	if status == http.StatusOK && g != "hitl" {
		c.checkValues(g, values, "runs/wait")
	}
}

// checkValues notes a runs/wait answer that lacks what the graph writes
// (an answer of a run that was retried must still be the whole result).
func (c *client) checkValues(g string, v map[string]any, what string) {
	if _, failed := v["__error__"]; failed {
		c.st.note(what + " answered a run error")
		return
	}
	switch g {
	case "count_go", "count_js":
		if execs, _ := v["execs"].([]any); len(execs) != 3 {
			c.st.anomaly("%s of %s: execs %v, want 3 entries", what, g, v["execs"])
		}
	case "foo_bar":
		if v["foo"] != "b" {
			c.st.anomaly("%s of foo_bar: %v", what, v)
		}
	}
}

func (c *client) streamRandom() { c.streamAction(c.anyGraph()) }

// cancelAction starts a longer run and cancels it a moment later, with
// action interrupt or rollback.
func (c *client) cancelAction() {
	tid := c.newThread()
	if tid == "" {
		return
	}
	g := []string{"slow", "count_go", "count_js"}[c.rng.IntN(3)]
	in := c.input(g, false)
	in["ms"] = 300 + c.rng.IntN(400)
	rid, _ := c.createRun(tid, map[string]any{"assistant_id": g, "input": in})
	if rid == "" {
		return
	}
	time.Sleep(time.Duration(50+c.rng.IntN(500)) * time.Millisecond)
	act := []string{"interrupt", "rollback"}[c.rng.IntN(2)]
	r := c.retry("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?action="+act, nil, 20*time.Second, 10)
	c.st.note(fmt.Sprintf("cancel %s → %d", act, r.status))
}

// hitlAction runs a graph to an interrupt and resumes it with a Command.
func (c *client) hitlAction() {
	tid := c.newThread()
	if tid == "" {
		return
	}
	g := []string{"hitl", "count_go", "count_js"}[c.rng.IntN(3)]
	status, values := c.wait(tid, map[string]any{"assistant_id": g, "input": c.input(g, true)})
	if status != http.StatusOK {
		return
	}
	if _, ok := values["__interrupt__"]; !ok {
		c.st.anomaly("runs/wait of %s with an interrupt answered no __interrupt__: %v", g, values)
		return
	}
	status, values = c.wait(tid, map[string]any{"assistant_id": g, "command": map[string]any{"resume": "yes"}})
	if status != http.StatusOK {
		return
	}
	switch g {
	case "hitl":
		if values["result"] != "soak:yes" {
			c.st.anomaly("resumed hitl answered %v", values)
		}
	default:
		if values["answer"] != "yes" {
			c.st.anomaly("resumed %s answered %v", g, values)
		}
		c.checkValues(g, values, "resume")
	}
}

// updateStateAction runs a graph, then edits the thread's state.
func (c *client) updateStateAction() {
	tid := c.newThread()
	if tid == "" {
		return
	}
	g := c.anyGraph()
	if status, _ := c.wait(tid, map[string]any{"assistant_id": g, "input": c.input(g, false)}); status != http.StatusOK {
		return
	}
	var values map[string]any
	switch g {
	case "foo_bar":
		values = map[string]any{"foo": "edited"}
	case "echo_chat":
		values = map[string]any{"messages": []any{map[string]any{"type": "human", "content": "edited"}}}
	case "slow":
		values = map[string]any{"tag": "edited"}
	case "hitl":
		values = map[string]any{"input": "edited"}
	default:
		values = map[string]any{"note": "edited"}
	}
	r := c.do("POST", "/threads/"+tid+"/state", map[string]any{"values": values}, 60*time.Second)
	c.st.note(fmt.Sprintf("update_state %s → %d", g, r.status))
}

// multitaskAction starts a run and, while it runs, another one on the same
// thread with a multitask strategy.
func (c *client) multitaskAction() {
	tid := c.newThread()
	if tid == "" {
		return
	}
	g := []string{"slow", "count_go", "count_js"}[c.rng.IntN(3)]
	in := c.input(g, false)
	in["ms"] = 200 + c.rng.IntN(300)
	first, _ := c.createRun(tid, map[string]any{"assistant_id": g, "input": in})
	if first == "" {
		return
	}
	strategy := []string{"reject", "enqueue", "interrupt", "rollback"}[c.rng.IntN(4)]
	second, status := c.createRun(tid, map[string]any{"assistant_id": g, "input": c.input(g, false), "multitask_strategy": strategy})
	c.st.note(fmt.Sprintf("multitask %s → %d", strategy, status))
	if second == "" {
		return
	}
	// Join the second run: it ends after (or instead of) the first.
	r := c.retry("GET", "/threads/"+tid+"/runs/"+second+"/join", nil, 90*time.Second, 5)
	c.st.note(fmt.Sprintf("join → %d", r.status))
}
