package main

import (
	"strings"
	"testing"
	"time"
)

func ms(t time.Time) int64 { return t.UnixMilli() }

// The exactly-once rule: an uncommitted execution in an earlier attempt
// (or earlier in the committing attempt) is allowed; one in a later
// attempt, or later in the same attempt, is a committed step executed
// again; a step committed twice, an unlogged commit, a rolled-back run's
// commit and an execution without a claim are violations too.
func TestExactlyOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	attempts := map[string][]attempt{
		"r1": {{1, "go1.1", at(0)}, {2, "go1.2", at(10)}},
		"r2": {{1, "js1.1", at(0)}},
		"r3": {{1, "go1.1", at(0)}, {2, "go1.2", at(10)}},
	}
	exists := map[string]bool{"r1": true, "r2": true, "r3": true}
	ex := func(id, run string, step int, node, worker string, s int) Exec {
		return Exec{Exec: id, RunID: run, ThreadID: "t-" + run, Step: step, Node: node, Worker: worker, TMs: ms(at(s))}
	}
	clean := []Exec{
		// r1: a killed in attempt 1 before its commit, re-executed and committed by attempt 2.
		ex("go1.1:1", "r1", 1, "a", "go1.1", 1),
		ex("go1.2:1", "r1", 1, "a", "go1.2", 11),
		// r2: b executed twice in one attempt, the first not committed (a failed commit retried).
		ex("js1.1:1", "r2", 1, "b", "js1.1", 1),
		ex("js1.1:2", "r2", 1, "b", "js1.1", 2),
		// A rolled-back run's execution: counted, not checked.
		ex("go1.1:9", "gone", 1, "a", "go1.1", 3),
	}
	committed := map[string][]string{"t-r1": {"go1.2:1"}, "t-r2": {"js1.1:2"}}
	sum, bad := exactlyOnce(clean, committed, attempts, exists)
	if len(bad) != 0 {
		t.Fatalf("violations in a clean history: %v", bad)
	}
	if sum.executions != 5 || sum.committed != 2 || sum.discarded != 2 || sum.rolledBack != 1 {
		t.Fatalf("summary %+v", sum)
	}

	for _, tc := range []struct {
		name      string
		execs     []Exec
		committed map[string][]string
		want      string
	}{
		{"re-executed by a later attempt", []Exec{ex("go1.1:1", "r3", 1, "a", "go1.1", 1), ex("go1.2:1", "r3", 1, "a", "go1.2", 11)},
			map[string][]string{"t-r3": {"go1.1:1"}}, "executed again (go1.2:1, attempt 2) after its commit (go1.1:1, attempt 1)"},
		{"re-executed later in the same attempt", []Exec{ex("js1.1:1", "r2", 1, "b", "js1.1", 1), ex("js1.1:2", "r2", 1, "b", "js1.1", 2)},
			map[string][]string{"t-r2": {"js1.1:1"}}, "executed again (js1.1:2, attempt 1)"},
		{"exec id twice in the state", []Exec{ex("js1.1:1", "r2", 1, "b", "js1.1", 1)},
			map[string][]string{"t-r2": {"js1.1:1", "js1.1:1"}}, "committed twice"},
		{"two executions of one task committed", []Exec{ex("go1.1:1", "r3", 1, "a", "go1.1", 1), ex("go1.2:1", "r3", 1, "a", "go1.2", 11)},
			map[string][]string{"t-r3": {"go1.1:1", "go1.2:1"}}, "committed twice (executions go1.1:1 and go1.2:1)"},
		{"commit missing from the logs", nil, map[string][]string{"t-r2": {"js1.1:7"}}, "not in any execution log"},
		{"rolled-back run's commit in the state", []Exec{ex("go1.1:9", "gone", 1, "a", "go1.1", 3)},
			map[string][]string{"t-gone": {"go1.1:9"}}, "which was rolled back"},
		{"execution without a claim", []Exec{ex("js2.1:1", "r2", 1, "a", "js2.1", 1)}, nil, "matches none of its claims"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, bad := exactlyOnce(tc.execs, tc.committed, attempts, exists)
			if len(bad) == 0 || !strings.Contains(strings.Join(bad, "\n"), tc.want) {
				t.Fatalf("violations %q, want one with %q", bad, tc.want)
			}
		})
	}
}

func TestGapCheck(t *testing.T) {
	want := []int64{1, 2, 4, 5}
	for _, tc := range []struct {
		got  []int64
		fail string
	}{
		{[]int64{1, 2, 4, 5}, ""},
		{[]int64{1, 2, 5}, "got id 5, want 4"},
		{[]int64{1, 2, 2, 4, 5}, "got id 2, want 4"},
		{[]int64{1, 2, 4}, "ended after 3 of 4"},
		{[]int64{1, 2, 4, 5, 6}, "got 5 events"},
	} {
		msg := gapCheck(want, tc.got)
		if (tc.fail == "") != (msg == "") || !strings.Contains(msg, tc.fail) {
			t.Errorf("gapCheck(%v) = %q, want %q", tc.got, msg, tc.fail)
		}
	}
}

func TestOutageWindow(t *testing.T) {
	tl := &timeline{}
	t0 := time.Now()
	tl.events = []event{{at: t0, kind: eventPGStop}, {at: t0.Add(4 * time.Second), kind: eventPGStart}}
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{{-time.Second, false}, {0, true}, {3 * time.Second, true}, {10 * time.Second, true}, {20 * time.Second, false}} {
		if got := tl.duringOutage(t0.Add(tc.at), outageSlack); got != tc.want {
			t.Errorf("duringOutage(+%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
}

func TestServerLogLines(t *testing.T) {
	line := `time=2026-11-25T12:51:32.530Z level=ERROR msg=request request_id=x method=POST path=/dispatch/d/commit status=500 bytes=35 duration_ms=1`
	m := requestLine.FindStringSubmatch(line)
	if m == nil || m[2] != "POST" || m[3] != "/dispatch/d/commit" || m[4] != "500" {
		t.Fatalf("requestLine: %q", m)
	}
	if internalLine.FindStringSubmatch(`time=x level=ERROR msg="internal error" method=POST path=/p error="boom"`) == nil {
		t.Fatal("internalLine does not match")
	}
}
