package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Reference figures from the issue: the official JS dev server (in memory,
// not durable) on this 2-core machine, thread creates per second.
var referenceCreate = map[int]float64{1: 700, 16: 1000}

// baselineInsert is the floor a durable thread create cannot beat: one
// INSERT … RETURNING of the same row shape, as its own (autocommit)
// transaction.
const baselineInsert = `INSERT INTO threads (thread_id, metadata) VALUES ($1, $2)
	RETURNING thread_id, created_at, updated_at, state_updated_at, metadata, status, config,
	"values", interrupts, error, parent_thread_id, resource_id`

// threads measures POST /threads and GET /threads/{id}, and at each
// concurrency the bare INSERT baseline on the same database.
func (l *load) threads() error {
	fmt.Printf("\n== threads: create and get\n")
	if l.dsn != "" {
		fmt.Printf("baseline: %q through pgx, one connection per worker, same metadata; ratio = Weft create ops/s / baseline ops/s\n", "INSERT INTO threads … RETURNING <all columns>")
	} else {
		fmt.Printf("baseline: skipped (no -database-url)\n")
	}
	fmt.Printf("%-8s %5s %9s %9s %8s %8s %8s %8s %8s %s\n", "op", "conc", "requests", "ops/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors", "vs")
	for _, c := range l.levels {
		var base *result
		if l.dsn != "" {
			b, err := l.baseline(c)
			if err != nil {
				return fmt.Errorf("baseline: %w", err)
			}
			b.print("insert", c, "bare INSERT … RETURNING (baseline)")
			base = &b
		}
		var ids []string
		var mu sync.Mutex
		stop, err := l.startProfile(c)
		if err != nil {
			return err
		}
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
		stop()
		ref := ""
		if base != nil {
			ref = fmt.Sprintf("%.2fx of baseline", res.opsPerSec()/base.opsPerSec())
		}
		if r, ok := referenceCreate[c]; ok {
			ref += fmt.Sprintf(", %.2fx of JS dev server %.0f/s", res.opsPerSec()/r, r)
		}
		res.print("create", c, ref)
		if len(ids) == 0 {
			continue
		}
		res = phase(c, l.duration, l.maxReq, func(i int) error { return l.get("/threads/" + ids[i%len(ids)]) })
		res.print("get", c, "")
	}
	return nil
}

// startProfile starts a CPU profile of the create phase at concurrency c
// (file <cpuprofile>.c<c>) and returns the function that stops it.
func (l *load) startProfile(c int) (func(), error) {
	if l.cpuProfile == "" {
		return func() {}, nil
	}
	name := fmt.Sprintf("%s.c%d", l.cpuProfile, c)
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		fmt.Printf("profile: %s\n", name)
	}, nil
}

// baseline runs the bare INSERT from c workers, each on its own connection.
func (l *load) baseline(c int) (result, error) {
	ctx := context.Background()
	conns := make([]*pgx.Conn, c)
	defer func() {
		for _, conn := range conns {
			if conn != nil {
				conn.Close(ctx)
			}
		}
	}()
	for w := range conns {
		conn, err := pgx.Connect(ctx, l.dsn)
		if err != nil {
			return result{}, err
		}
		conns[w] = conn
	}
	free := make(chan *pgx.Conn, c) // hands each worker a connection of its own
	for _, conn := range conns {
		free <- conn
	}
	return phase(c, l.duration, l.maxReq, func(i int) error {
		conn := <-free
		defer func() { free <- conn }()
		rows, err := conn.Query(ctx, baselineInsert, uuid.Must(uuid.NewV7()),
			map[string]any{"bench": "weft-load-baseline", "n": i})
		if err != nil {
			return err
		}
		for rows.Next() {
			_ = rows.RawValues()
		}
		rows.Close()
		return rows.Err()
	}), nil
}
