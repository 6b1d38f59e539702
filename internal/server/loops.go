package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
)

// loop is one background loop of the server (the notification listener,
// the lease reaper, the run workers, webhook delivery, the sweepers, the
// cron scheduler, the store indexer, the HTTP listeners, the PostgreSQL
// supervisor's watch), under the one lifecycle they all share:
//
//   - Start runs it on a goroutine of its own, with a context of its own
//     derived from Start's, and returns once it has started (what it does
//     before calling started, such as subscribing to the notification
//     listener, is done by then). Start on a loop that is running does not
//     start a second one.
//   - Started is closed once the latest run has started.
//   - Stop cancels that context and waits for the loop to return, for as
//     long as its own ctx allows.
//
// A loop that has returned (stopped, or ended on its own) may be started
// again. Every method is safe for concurrent use.
type loop struct {
	name string
	run  loopFunc

	mu    sync.Mutex
	cur   *loopRun      // the latest run (nil before the first Start)
	first chan struct{} // the first run's started, so Started works before Start
}

// loopFunc is a loop's body: it runs until ctx ends (or it fails), and calls
// started once it is under way (more calls do nothing). A loop that
// returns without calling started has failed to start: Start returns its
// error.
type loopFunc func(ctx context.Context, started func()) error

// loopRun is one run of a loop, from Start to its return.
type loopRun struct {
	cancel  context.CancelFunc
	started chan struct{} // closed when the run calls started
	done    chan struct{} // closed when the run has returned
	err     error         // what it returned; set before done is closed
}

// errLoopEnded is what Start returns for a loop that returned nil before
// it started.
var errLoopEnded = errors.New("ended before it started")

// newLoop returns the loop name (used in errors and logs) running run.
func newLoop(name string, run loopFunc) *loop {
	return &loop{name: name, run: run, first: make(chan struct{})}
}

// Name is the loop's name.
func (l *loop) Name() string { return l.name }

// Start runs the loop unless it is running, and returns once it has
// started: nil, or the loop's error if it returned before it started.
// The loop's context is derived from ctx: cancelling ctx stops it too.
func (l *loop) Start(ctx context.Context) error {
	l.mu.Lock()
	r := l.cur
	if r == nil || isClosed(r.done) {
		started := l.first
		if r != nil {
			started = make(chan struct{})
		}
		runCtx, cancel := context.WithCancel(ctx)
		r = &loopRun{cancel: cancel, started: started, done: make(chan struct{})}
		l.cur = r
		go l.runOnce(runCtx, r)
	}
	l.mu.Unlock()
	select {
	case <-r.started:
		return nil
	case <-r.done:
	}
	if isClosed(r.started) { // started, then returned at once
		return nil
	}
	if r.err == nil {
		return fmt.Errorf("%s: %w", l.name, errLoopEnded)
	}
	return fmt.Errorf("%s: %w", l.name, r.err)
}

func (l *loop) runOnce(ctx context.Context, r *loopRun) {
	defer close(r.done)
	defer r.cancel()
	var once sync.Once
	r.err = l.run(ctx, func() { once.Do(func() { close(r.started) }) })
}

// Started is closed once the latest run has started (never, before the
// first Start; a run that failed to start leaves it open). Ask again after
// each Start: a new run has a new channel.
func (l *loop) Started() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil {
		return l.first
	}
	return l.cur.started
}

// Stop cancels the latest run and waits, until ctx ends, for it to return.
// It returns what the run returned (nil for a loop that never ran), or an
// error wrapping ctx's when the run had not returned in time (it carries
// on, cancelled, on its own).
func (l *loop) Stop(ctx context.Context) error {
	r := l.halt()
	if r == nil {
		return nil
	}
	return l.wait(ctx, r)
}

// halt cancels the latest run without waiting for it (nil: none yet).
func (l *loop) halt() *loopRun {
	l.mu.Lock()
	r := l.cur
	l.mu.Unlock()
	if r != nil {
		r.cancel()
	}
	return r
}

func (l *loop) wait(ctx context.Context, r *loopRun) error {
	select {
	case <-r.done:
		if r.err != nil {
			return fmt.Errorf("%s: %w", l.name, r.err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s did not stop: %w", l.name, context.Cause(ctx))
	}
}

// startLoops starts loops in order and returns the first error (the loops
// after it are not started).
func startLoops(ctx context.Context, loops ...*loop) error {
	for _, l := range loops {
		if err := l.Start(ctx); err != nil {
			return err
		}
	}
	return nil
}

// stopLoops stops loops together: it cancels every one of them first, then
// waits for each in turn, all within ctx, and returns their errors joined.
// Nil loops are skipped.
func stopLoops(ctx context.Context, loops ...*loop) error {
	runs := make([]*loopRun, len(loops))
	for i, l := range loops {
		if l != nil {
			runs[i] = l.halt()
		}
	}
	var errs []error
	for i, r := range runs {
		if r != nil {
			errs = append(errs, loops[i].wait(ctx, r))
		}
	}
	return errors.Join(errs...)
}

// blocking adapts a loop that runs until ctx ends (postgres.Listener.Run,
// threads.Store.RunTTLSweeper): it has started once its goroutine runs.
func blocking(run func(ctx context.Context)) loopFunc {
	return func(ctx context.Context, started func()) error {
		started()
		run(ctx)
		return nil
	}
}

// waiting adapts the packages' Start(ctx) (wait func()) (coordinator,
// executor, webhook, crons, the store's sweeper and indexer): it has
// started once their Start has returned (subscriptions made, goroutines
// running), and it returns when wait does.
func waiting(start func(ctx context.Context) (wait func())) loopFunc {
	return func(ctx context.Context, started func()) error {
		wait := start(ctx)
		started()
		wait()
		return nil
	}
}

// serving adapts srv.Serve(ln): it has started once its goroutine runs,
// and ended gets what Serve returned (after a Shutdown or Close,
// http.ErrServerClosed). Cancelling it closes ln only, so Serve returns but
// the connections already open are left to srv's Shutdown or Close (the
// server stops this loop after those).
func serving(srv *http.Server, ln net.Listener, ended func(error)) loopFunc {
	return func(ctx context.Context, started func()) error {
		stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
		defer stop()
		started()
		ended(srv.Serve(ln))
		return nil
	}
}

// forwarding adapts the watch of a channel that sends at most one error
// and is then closed (postgres.Cluster.Supervise): what it sends goes to
// to. Cancelled, it still forwards an error the channel holds, so a Stop
// that follows the channel's closing loses nothing.
func forwarding(from <-chan error, to chan<- error) loopFunc {
	return func(ctx context.Context, started func()) error {
		started()
		select {
		case err, ok := <-from:
			if ok {
				to <- err
			}
		case <-ctx.Done():
			select {
			case err, ok := <-from:
				if ok {
					to <- err
				}
			default:
			}
		}
		return nil
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
