package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Exactly once, defined.
//
// A counting graph logs every execution of a node when it starts (Exec)
// and writes the execution's id into its thread's "execs" channel, so the
// thread's final state names the executions whose writes were committed.
// Per task (run, step, node):
//
//   - at most one execution is committed (an exec id found twice in a
//     thread's state, or two committed executions of one task, is a step
//     committed twice);
//   - every committed execution is in the logs (else the counting is
//     broken and proves nothing);
//   - an execution that was not committed is allowed when it ran before
//     the commit could be known: in an earlier attempt of the run than the
//     committing one (a process killed, or fenced off after its lease
//     expired, before its commit), or earlier in the same attempt. An
//     execution in a later attempt than the committing one, or after the
//     committed one in the same attempt, re-executed a committed step: a
//     violation. Claims are exclusive and commits fenced, so a later
//     attempt only exists once the committing one has ended, after its
//     commit.
//   - every execution of a run that still exists belongs to an attempt of
//     that run claimed by the executing process (else a process ran a run
//     it had not claimed).
//
// Executions of runs that no longer exist (rolled back by a multitask
// strategy or a cancel with action rollback) are counted, not checked; a
// rolled-back run's exec id left in a thread's state is a violation.

// attempt is one claim of a run, from run_dispatch_attempts.
type attempt struct {
	n         int
	worker    string
	claimedAt time.Time
}

// execSummary is what the exactly-once check counted.
type execSummary struct {
	executions, committed, discarded, rolledBack, torn int
}

// attemptOf is the attempt of runAttempts an execution belongs to: the
// latest one its worker claimed no later than its start (0: none).
func attemptOf(e Exec, runAttempts []attempt) int {
	best := 0
	at := time.UnixMilli(e.TMs + 1) // the log has milliseconds; claims microseconds
	for _, a := range runAttempts {
		if a.worker == e.Worker && !a.claimedAt.After(at) && a.n > best {
			best = a.n
		}
	}
	return best
}

// execSeq is an execution's position in its process's log (exec ids are
// "<worker>:<n>").
func execSeq(e Exec) int {
	v, _ := strconv.Atoi(e.Exec[strings.LastIndexByte(e.Exec, ':')+1:])
	return v
}

// exactlyOnce checks executions against the committed exec ids (per
// thread, in state order) and the runs' attempts (missing runs: deleted).
func exactlyOnce(execs []Exec, committed map[string][]string, attempts map[string][]attempt, exists map[string]bool) (execSummary, []string) {
	var sum execSummary
	var bad []string
	byID := map[string]Exec{}
	byTask := map[task][]Exec{}
	for _, e := range execs {
		byID[e.Exec] = e
		byTask[e.task()] = append(byTask[e.task()], e)
	}
	sum.executions = len(execs)
	committedOf := map[task]Exec{}
	threads := make([]string, 0, len(committed))
	for t := range committed {
		threads = append(threads, t)
	}
	sort.Strings(threads)
	for _, tid := range threads {
		seen := map[string]bool{}
		for _, id := range committed[tid] {
			if seen[id] {
				bad = append(bad, fmt.Sprintf("thread %s: execution %s committed twice", tid, id))
				continue
			}
			seen[id] = true
			e, ok := byID[id]
			if !ok {
				bad = append(bad, fmt.Sprintf("thread %s: committed execution %s is not in any execution log", tid, id))
				continue
			}
			if e.ThreadID != tid {
				bad = append(bad, fmt.Sprintf("thread %s: holds execution %s of thread %s", tid, id, e.ThreadID))
			}
			if !exists[e.RunID] {
				bad = append(bad, fmt.Sprintf("thread %s: holds execution %s of run %s, which was rolled back", tid, id, e.RunID))
				continue
			}
			if prev, dup := committedOf[e.task()]; dup {
				bad = append(bad, fmt.Sprintf("run %s step %d node %s: committed twice (executions %s and %s)", e.RunID, e.Step, e.Node, prev.Exec, id))
				continue
			}
			committedOf[e.task()] = e
			sum.committed++
		}
	}
	for tk, list := range byTask {
		if !exists[tk.run] {
			sum.rolledBack += len(list)
			continue
		}
		ra := attempts[tk.run]
		for _, e := range list {
			if attemptOf(e, ra) == 0 {
				bad = append(bad, fmt.Sprintf("run %s: execution %s by %s at %s matches none of its claims %v",
					e.RunID, e.Exec, e.Worker, time.UnixMilli(e.TMs).Format("15:04:05.000"), ra))
			}
		}
		c, ok := committedOf[tk]
		if !ok {
			sum.discarded += len(list)
			continue
		}
		ca := attemptOf(c, ra)
		for _, e := range list {
			if e.Exec == c.Exec {
				continue
			}
			ea := attemptOf(e, ra)
			switch {
			case ea > ca, ea == ca && e.Worker == c.Worker && execSeq(e) > execSeq(c):
				bad = append(bad, fmt.Sprintf("run %s step %d node %s: executed again (%s, attempt %d) after its commit (%s, attempt %d)",
					tk.run, tk.step, tk.node, e.Exec, ea, c.Exec, ca))
			default:
				sum.discarded++
			}
		}
	}
	sort.Strings(bad)
	return sum, bad
}

// checkExactlyOnce gathers the logs, the counting threads' states and the
// runs' attempts, and runs exactlyOnce.
func checkExactlyOnce(ctx context.Context, db *pgxpool.Pool, c *client, execDir string, fd *findings) error {
	execs, torn, err := readExecLogs(execDir)
	if err != nil {
		return err
	}
	committed := map[string][]string{}
	for _, g := range countingGraphs {
		tids, err := threadsOf(ctx, db, g)
		if err != nil {
			return err
		}
		for _, tid := range tids {
			v, err := threadValues(c, tid)
			if err != nil {
				fd.violate("state of %s thread %s: %v", g, tid, err)
				continue
			}
			list, _ := v["execs"].([]any)
			for _, x := range list {
				s, _ := x.(string)
				committed[tid] = append(committed[tid], s)
			}
		}
	}
	rows, err := db.Query(ctx, `SELECT d.run_id::text, a.attempt, a.worker, a.claimed_at FROM run_dispatch_attempts a
		JOIN run_dispatches d USING (dispatch_id) WHERE d.graph_id = ANY($1)`, countingGraphs)
	if err != nil {
		return err
	}
	attempts := map[string][]attempt{}
	for rows.Next() {
		var run string
		var a attempt
		if err := rows.Scan(&run, &a.n, &a.worker, &a.claimedAt); err != nil {
			return err
		}
		attempts[run] = append(attempts[run], a)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = db.Query(ctx, `SELECT run_id::text FROM runs WHERE graph_id = ANY($1)`, countingGraphs)
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		exists[id] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	sum, bad := exactlyOnce(execs, committed, attempts, exists)
	sum.torn = torn
	fd.exec = sum
	for i, b := range bad {
		if i == 20 {
			fd.violate("exactly once: %d more", len(bad)-20)
			break
		}
		fd.violate("exactly once: %s", b)
	}
	return nil
}
