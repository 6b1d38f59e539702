package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// errBoom is what the failing test loops return.
var errBoom = errors.New("boom")

// loopKind is one way a loop behaves, with counters of its runs.
type loopKind struct {
	name    string
	starts  bool // calls started
	fails   bool // returns errBoom
	blocks  bool // runs until cancelled
	entered atomic.Int64
	exited  atomic.Int64
}

func (k *loopKind) run(ctx context.Context, started func()) error {
	k.entered.Add(1)
	defer k.exited.Add(1)
	if k.starts {
		started()
	}
	if k.blocks {
		<-ctx.Done()
	}
	if k.fails {
		return errBoom
	}
	return nil
}

func loopKinds() []*loopKind {
	return []*loopKind{
		{name: "returns at once", starts: true},
		{name: "blocks until cancelled", starts: true, blocks: true},
		{name: "fails after starting", starts: true, fails: true},
		{name: "fails after cancelled", starts: true, blocks: true, fails: true},
		{name: "fails to start", fails: true},
		{name: "returns before starting"},
	}
}

// within fails t unless f returns within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func TestLoopLifecycle(t *testing.T) {
	ctx := context.Background()
	for _, k := range loopKinds() {
		t.Run(k.name, func(t *testing.T) {
			l := newLoop(k.name, k.run)
			if err := l.Stop(ctx); err != nil {
				t.Fatalf("Stop before Start: %v", err)
			}
			for i := range 3 { // and again after it returned
				started := l.Started()
				err := l.Start(ctx)
				switch {
				case k.starts && err != nil:
					t.Fatalf("run %d: Start: %v", i, err)
				case !k.starts && err == nil:
					t.Fatalf("run %d: Start of a loop that returned before starting: nil error", i)
				case !k.starts && k.fails && !errors.Is(err, errBoom):
					t.Fatalf("run %d: Start: %v, want errBoom", i, err)
				case !k.starts && !k.fails && !errors.Is(err, errLoopEnded):
					t.Fatalf("run %d: Start: %v, want errLoopEnded", i, err)
				}
				if i == 0 && l.Started() != started {
					t.Fatalf("Started before the first Start is not the first run's")
				}
				if closed := isClosed(l.Started()); closed != k.starts {
					t.Fatalf("run %d: Started closed = %v, want %v", i, closed, k.starts)
				}
				var stopErr error
				within(t, 2*time.Second, "Stop", func() { stopErr = l.Stop(ctx) })
				if got := errors.Is(stopErr, errBoom); got != k.fails {
					t.Fatalf("run %d: Stop: %v (errBoom: %v, want %v)", i, stopErr, got, k.fails)
				}
				if n, x := k.entered.Load(), k.exited.Load(); n != int64(i+1) || x != n {
					t.Fatalf("run %d: %d runs entered, %d returned; want %d each", i, n, x, i+1)
				}
			}
		})
	}

	t.Run("Start on a running loop starts no second run", func(t *testing.T) {
		k := &loopKind{starts: true, blocks: true}
		l := newLoop("blocker", k.run)
		for range 5 {
			if err := l.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := k.entered.Load(); n != 1 {
			t.Fatalf("%d runs, want 1", n)
		}
		if err := l.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("cancelling Start's context stops the loop", func(t *testing.T) {
		k := &loopKind{starts: true, blocks: true}
		l := newLoop("blocker", k.run)
		startCtx, cancel := context.WithCancel(ctx)
		if err := l.Start(startCtx); err != nil {
			t.Fatal(err)
		}
		cancel()
		deadline := time.Now().Add(2 * time.Second)
		for k.exited.Load() != 1 {
			if time.Now().After(deadline) {
				t.Fatal("the loop did not return when Start's context was cancelled")
			}
			time.Sleep(time.Millisecond)
		}
	})

	t.Run("Stop is bounded by its context", func(t *testing.T) {
		release := make(chan struct{})
		l := newLoop("stubborn", func(ctx context.Context, started func()) error {
			started()
			<-release // ignores ctx
			return nil
		})
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		stopCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		var err error
		within(t, 2*time.Second, "Stop", func() { err = l.Stop(stopCtx) })
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop of a loop that ignores cancellation: %v, want DeadlineExceeded", err)
		}
		close(release)
		if err := l.Stop(ctx); err != nil {
			t.Fatalf("Stop once it returns: %v", err)
		}
	})

	t.Run("stopLoops cancels every loop before waiting", func(t *testing.T) {
		// first returns only once second is cancelled: stopping them one
		// after the other (cancel, wait, cancel, wait) would time out.
		secondCancelled := make(chan struct{})
		first := newLoop("first", func(ctx context.Context, started func()) error {
			started()
			<-ctx.Done()
			<-secondCancelled
			return nil
		})
		second := newLoop("second", func(ctx context.Context, started func()) error {
			started()
			<-ctx.Done()
			close(secondCancelled)
			return errBoom
		})
		if err := startLoops(ctx, first, second); err != nil {
			t.Fatal(err)
		}
		stopCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		err := stopLoops(stopCtx, first, nil, second)
		if !errors.Is(err, errBoom) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("stopLoops: %v, want errBoom alone", err)
		}
	})

	t.Run("startLoops stops at the first that fails", func(t *testing.T) {
		ok, bad, after := &loopKind{starts: true, blocks: true}, &loopKind{fails: true}, &loopKind{starts: true}
		loops := []*loop{newLoop("ok", ok.run), newLoop("bad", bad.run), newLoop("after", after.run)}
		if err := startLoops(ctx, loops...); !errors.Is(err, errBoom) {
			t.Fatalf("startLoops: %v, want errBoom", err)
		}
		if after.entered.Load() != 0 {
			t.Fatal("a loop after the failed one was started")
		}
		if err := stopLoops(ctx, loops...); !errors.Is(err, errBoom) {
			t.Fatalf("stopLoops: %v, want errBoom (the loop that failed)", err)
		}
		if ok.exited.Load() != 1 {
			t.Fatal("the loop started before the failed one did not return")
		}
	})

	t.Run("adapters", func(t *testing.T) {
		var subscribed atomic.Bool
		var workers sync.WaitGroup
		w := newLoop("waiting", waiting(func(ctx context.Context) func() {
			subscribed.Store(true) // what a package's Start does before its goroutines
			workers.Go(func() { <-ctx.Done() })
			return workers.Wait
		}))
		if err := w.Start(ctx); err != nil {
			t.Fatal(err)
		}
		if !subscribed.Load() {
			t.Fatal("waiting: Start returned before the package's Start did")
		}
		var ran atomic.Bool
		b := newLoop("blocking", blocking(func(ctx context.Context) { ran.Store(true); <-ctx.Done() }))
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		failed := make(chan error, 1)
		sent := make(chan error, 1)
		f := newLoop("forwarding", forwarding(failed, sent))
		if err := f.Start(ctx); err != nil {
			t.Fatal(err)
		}
		failed <- errBoom // held when Stop cancels the watch, or read before
		close(failed)
		within(t, 2*time.Second, "Stop", func() {
			if err := stopLoops(ctx, w, b, f); err != nil {
				t.Errorf("stopLoops: %v", err)
			}
		})
		if !ran.Load() {
			t.Fatal("blocking: the loop never ran")
		}
		select {
		case err := <-sent:
			if !errors.Is(err, errBoom) {
				t.Fatalf("forwarding: %v", err)
			}
		default:
			t.Fatal("forwarding lost the error")
		}
	})
}

// TestLoopLifecycleStress starts and stops loops of every kind many times,
// one after the other and from several goroutines at once (on one shared
// loop each, and on loops of their own): Stop always returns, every run
// that entered returned, Started is closed after every successful Start,
// and no goroutine is left behind.
func TestLoopLifecycleStress(t *testing.T) {
	ctx := context.Background()
	baseline := runtime.NumGoroutine()
	const workers = 8
	deadline := time.Now().Add(2 * time.Second)
	kinds := loopKinds()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	var shareds []*loop
	for _, k := range kinds {
		shared := newLoop(k.name, k.run)
		shareds = append(shareds, shared)
		for w := range workers {
			wg.Go(func() {
				for i := 0; i < 400 && time.Now().Before(deadline); i++ {
					l := shared
					// Half of them on a loop of their own, whose run has
					// returned when Stop does.
					var in, out atomic.Int64
					if w%2 == 1 {
						l = newLoop(k.name, func(ctx context.Context, started func()) error {
							in.Add(1)
							defer out.Add(1)
							return k.run(ctx, started)
						})
					}
					err := l.Start(ctx)
					switch {
					case k.starts && err != nil:
						report(fmt.Errorf("%s: Start: %w", k.name, err))
						return
					case !k.starts && err == nil:
						report(fmt.Errorf("%s: Start returned nil", k.name))
						return
					}
					if k.starts {
						// Another goroutine may have stopped this run and
						// started the next: its Started closes soon too.
						select {
						case <-l.Started():
						case <-time.After(5 * time.Second):
							report(fmt.Errorf("%s: Started not closed after Start", k.name))
							return
						}
					}
					if i%3 == 0 {
						runtime.Gosched() // let another goroutine Start or Stop in between
					}
					stopCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
					err = l.Stop(stopCtx)
					cancel()
					if errors.Is(err, context.DeadlineExceeded) {
						report(fmt.Errorf("%s: Stop did not return: %w", k.name, err))
						return
					}
					if err != nil && !errors.Is(err, errBoom) {
						report(fmt.Errorf("%s: Stop: %w", k.name, err))
						return
					}
					if in.Load() != out.Load() {
						report(fmt.Errorf("%s: Stop returned before the run did", k.name))
						return
					}
				}
			})
		}
	}
	within(t, 30*time.Second, "the stress goroutines", wg.Wait)
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	for _, k := range kinds {
		if k.entered.Load() == 0 {
			t.Fatalf("%s: never ran", k.name)
		}
	}
	// A shared loop's last run may have been started after the last Stop
	// of the goroutine that stopped it: stop them all together.
	within(t, 5*time.Second, "stopLoops", func() { _ = stopLoops(ctx, shareds...) })
	for _, k := range kinds {
		if n, x := k.entered.Load(), k.exited.Load(); n != x {
			t.Errorf("%s: %d runs entered, %d returned", k.name, n, x)
		} else {
			t.Logf("%s: %d runs", k.name, n)
		}
	}
	// Every goroutine a run used is gone (a small tolerance for the
	// runtime's and the test framework's own).
	const tolerance = 3
	for end := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := runtime.NumGoroutine()
		if n <= baseline+tolerance {
			break
		}
		if time.Now().After(end) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before the stress:\n%s", n, baseline, buf[:runtime.Stack(buf, true)])
		}
	}
}

// A serving loop stops when cancelled, Shutdown or not, and reports what
// Serve returned.
func TestLoopServing(t *testing.T) {
	for _, shutdown := range []bool{true, false} {
		t.Run(fmt.Sprintf("shutdown first %v", shutdown), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.NotFoundHandler()}
			ended := make(chan error, 1)
			l := newLoop("http", serving(srv, ln, func(err error) { ended <- err }))
			if err := l.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			resp, err := http.Get("http://" + ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if shutdown {
				if err := srv.Shutdown(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			within(t, 2*time.Second, "Stop", func() {
				if err := l.Stop(context.Background()); err != nil {
					t.Errorf("Stop: %v", err)
				}
			})
			if err := <-ended; shutdown != errors.Is(err, http.ErrServerClosed) {
				t.Fatalf("Serve returned %v", err)
			}
			_ = srv.Close()
		})
	}
}
