package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Reference figures from the issue: the official JS dev server (in memory,
// not durable) running create thread + runs.wait on foo_bar, and the
// targets Weft is held to.
const (
	refRunC1MS       = 555.0 // ms per create + runs.wait at concurrency 1
	refRunC16PerSec  = 26.0  // create + runs.wait per second at concurrency 16
	targetC1Factor   = 50.0  // ≥50× faster at concurrency 1 …
	targetC1MS       = 10.0  // … and ≤10 ms per create + runs.wait
	targetC16Factor  = 20.0  // ≥20× the throughput at concurrency 16 …
	targetC16PerSec  = 500.0 // … and ≥500 runs/s
	targetClaimP50MS = 2.0   // created→claimed p50
)

// fooBarResult is the final state of foo_bar run on {"foo":""}, as
// json.Marshal writes it (keys sorted).
const fooBarResult = `{"bar":["a","b"],"foo":"b"}`

// dispatchLatencySQL reads, for the dispatches of the given threads, the
// time from the row's insert (created_at, clock_timestamp) to its latest
// claim (claimed_at, clock_timestamp), both on the database clock.
const dispatchLatencySQL = `SELECT extract(epoch FROM claimed_at - created_at)::float8 * 1000 AS ms, attempt, state
	FROM run_dispatches WHERE thread_id = ANY($1::uuid[])`

// runPhase is what one concurrency level of the runs suite measured.
type runPhase struct {
	c     int
	res   result
	claim result // created→claimed, as latencies (none when not measured)
}

// errorLog counts failures by message, keeping the first occurrence's
// text, so that the report can show each distinct error precisely.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]int
	order  []string
}

func (e *errorLog) add(err error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int{}
	}
	msg := err.Error()
	if len(msg) > 500 {
		msg = msg[:500] + "…"
	}
	if e.counts[msg] == 0 {
		e.order = append(e.order, msg)
	}
	e.counts[msg]++
	return err
}

func (e *errorLog) print(indent string) {
	for i, msg := range e.order {
		if i == 10 {
			fmt.Printf("%s… and %d more distinct errors\n", indent, len(e.order)-i)
			return
		}
		fmt.Printf("%s%d× %s\n", indent, e.counts[msg], msg)
	}
}

// runWait posts body to path and checks the answer is 200 with exactly
// the JSON document want (leading keep-alive newlines are allowed).
func (l *load) runWait(path string, body any, want string) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := l.client.Post(l.target+path, "application/json", bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %d, reading body: %w", path, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(got))
	}
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		return fmt.Errorf("POST %s: 200 with invalid JSON %q", path, got)
	}
	canon, _ := json.Marshal(v)
	if string(canon) != want {
		return fmt.Errorf("POST %s: 200 %s (want %s)", path, bytes.TrimSpace(got), want)
	}
	return nil
}

// runs measures create thread + runs/wait on foo_bar at each concurrency,
// then the created→claimed latency of the dispatches each phase created,
// and compares both with the JS dev server's figures and the targets.
func (l *load) runs() error {
	fmt.Printf("\n== runs: create thread + runs/wait on foo_bar\n")
	fmt.Printf("op: POST /threads {} then POST /threads/{id}/runs/wait %s; a status other than 200 or a body other than %s counts as an error (latency of both requests together)\n",
		`{"assistant_id":"foo_bar","input":{"foo":""}}`, fooBarResult)
	if l.dsn != "" {
		fmt.Printf("created→claimed: per run_dispatches row created in the phase, claimed_at - created_at: from the row's INSERT (clock_timestamp(), before its transaction commits) to its claim (clock_timestamp() in the claim statement), both on the database clock\n")
	} else {
		fmt.Printf("created→claimed: skipped (no -database-url)\n")
	}
	fmt.Printf("%-15s %5s %9s %9s %8s %8s %8s %8s %8s %s\n", "op", "conc", "count", "ops/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors", "vs")
	var phases []runPhase
	for _, c := range l.levels {
		var mu sync.Mutex
		var tids []string
		var errs errorLog
		stopProfile, err := l.startProfile(c)
		if err != nil {
			return err
		}
		res := phase(c, l.duration, l.maxReq, func(i int) error {
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			if err := l.post("/threads", map[string]any{}, &th); err != nil {
				return errs.add(err)
			}
			mu.Lock()
			tids = append(tids, th.ThreadID)
			mu.Unlock()
			body := map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": ""}}
			if err := l.runWait("/threads/"+th.ThreadID+"/runs/wait", body, fooBarResult); err != nil {
				return errs.add(err)
			}
			return nil
		})
		stopProfile()
		ref := ""
		switch c {
		case 1:
			if res.pct(0.5) > 0 {
				ref = fmt.Sprintf("p50 %.1fx faster than the JS dev server's %.0f ms", refRunC1MS/res.pct(0.5), refRunC1MS)
			}
		case 16:
			ref = fmt.Sprintf("%.1fx the JS dev server's %.0f runs/s", res.opsPerSec()/refRunC16PerSec, refRunC16PerSec)
		}
		fmt.Printf("%-15s %5d %9d %9.0f %8.2f %8.2f %8.2f %8.2f %8d %s\n", "create+wait", c, len(res.lat), res.opsPerSec(),
			res.pct(0.5), res.pct(0.9), res.pct(0.99), res.pct(1), res.errs, ref)
		errs.print("    error: ")
		p := runPhase{c: c, res: res}
		if l.dsn != "" && len(tids) > 0 {
			claim, notes, err := l.claimLatency(tids)
			if err != nil {
				return fmt.Errorf("created→claimed: %w", err)
			}
			p.claim = claim
			fmt.Printf("%-15s %5d %9d %9s %8.2f %8.2f %8.2f %8.2f %8s %s\n", "created→claimed", c, len(claim.lat), "",
				claim.pct(0.5), claim.pct(0.9), claim.pct(0.99), claim.pct(1), "", notes)
		}
		phases = append(phases, p)
	}
	l.runTargets(phases)
	return nil
}

// claimLatency reads the created→claimed latency of the dispatches of
// the given threads. It returns the sorted latencies of the claimed rows
// and a note on the rows found, on those on rows that are unclaimed or were
// claimed more than once (claimed_at is then the latest claim).
func (l *load) claimLatency(tids []string) (result, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, l.dsn)
	if err != nil {
		return result{}, "", err
	}
	defer conn.Close(ctx)
	type row struct {
		MS      *float64 `db:"ms"`
		Attempt int      `db:"attempt"`
		State   string   `db:"state"`
	}
	rows, err := conn.Query(ctx, dispatchLatencySQL, tids)
	if err != nil {
		return result{}, "", err
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByName[row])
	if err != nil {
		return result{}, "", err
	}
	var r result
	unclaimed, retried := 0, 0
	states := map[string]int{}
	for _, x := range list {
		states[x.State]++
		if x.Attempt > 1 {
			retried++
		}
		if x.MS == nil {
			unclaimed++
			continue
		}
		r.lat = append(r.lat, time.Duration(*x.MS*float64(time.Millisecond)))
	}
	slices.Sort(r.lat)
	note := fmt.Sprintf("%d dispatch rows for %d threads", len(list), len(tids))
	if unclaimed > 0 || retried > 0 {
		note += fmt.Sprintf("; %d never claimed, %d claimed more than once", unclaimed, retried)
	}
	if len(states) > 1 || states["acked"] != len(list) {
		keys := make([]string, 0, len(states))
		for k := range states {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		note += "; states:"
		for _, k := range keys {
			note += fmt.Sprintf(" %s=%d", k, states[k])
		}
	}
	return r, note, nil
}

// runTargets prints the comparison with the JS dev server and the
// targets. A target stated both as a ratio and as an absolute figure
// passes only when both hold.
func (l *load) runTargets(phases []runPhase) {
	byC := map[int]runPhase{}
	for _, p := range phases {
		byC[p.c] = p
	}
	mark := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "MISS"
	}
	line := func(measure, weft, vs, target string, ok bool) {
		fmt.Printf("%-30s %14s %24s %24s %s\n", measure, weft, vs, target, mark(ok))
	}
	fmt.Printf("\n== runs: targets (reference: official JS dev server, in memory, create + runs.wait on foo_bar: ~%.0f ms at concurrency 1, ~%.0f runs/s at concurrency 16)\n", refRunC1MS, refRunC16PerSec)
	fmt.Printf("%-30s %14s %24s %24s %s\n", "measure", "weft", "vs JS dev server", "target", "")
	c1Target := fmt.Sprintf("≥%.0fx and ≤%.0f ms", targetC1Factor, targetC1MS)
	if p, ok := byC[1]; ok && len(p.res.lat) > 0 {
		for _, m := range []struct {
			name string
			ms   float64
		}{{"c1 create+wait p50", p.res.pct(0.5)}, {"c1 create+wait mean (1/ops/s)", 1000 / p.res.opsPerSec()}} {
			x := refRunC1MS / m.ms
			line(m.name, fmt.Sprintf("%.2f ms", m.ms), fmt.Sprintf("%.1fx faster", x), c1Target, x >= targetC1Factor && m.ms <= targetC1MS)
		}
	} else {
		fmt.Printf("%-30s %14s (concurrency 1 not measured or no successful op)\n", "c1 create+wait", "-")
	}
	if p, ok := byC[16]; ok && len(p.res.lat) > 0 {
		ops := p.res.opsPerSec()
		x := ops / refRunC16PerSec
		line("c16 create+wait throughput", fmt.Sprintf("%.0f runs/s", ops), fmt.Sprintf("%.1fx the runs/s", x),
			fmt.Sprintf("≥%.0fx and ≥%.0f runs/s", targetC16Factor, targetC16PerSec), x >= targetC16Factor && ops >= targetC16PerSec)
	} else {
		fmt.Printf("%-30s %14s (concurrency 16 not measured or no successful op)\n", "c16 create+wait", "-")
	}
	for _, p := range phases {
		name := fmt.Sprintf("c%d created→claimed p50", p.c)
		if len(p.claim.lat) == 0 {
			fmt.Printf("%-30s %14s (not measured)\n", name, "-")
			continue
		}
		p50 := p.claim.pct(0.5)
		line(name, fmt.Sprintf("%.2f ms", p50), "", fmt.Sprintf("≤%.0f ms", targetClaimP50MS), p50 <= targetClaimP50MS)
	}
	for _, p := range phases {
		if p.res.errs > 0 {
			fmt.Printf("note: %d create+wait errors at concurrency %d (listed under its row above)\n", p.res.errs, p.c)
		}
	}
}
