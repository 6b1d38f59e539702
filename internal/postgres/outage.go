package postgres

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Outage turns the errors of background loops (workers, reaper, webhook
// delivery, listener) into one warning per database outage instead of one
// per loop and tick: the first error for which IsUnavailable holds logs a
// warning, later ones are silent, and the first success after it logs that
// the database is back with how long it was away. It is safe for
// concurrent use; the zero value needs Log set.
type Outage struct {
	Log  *slog.Logger
	What string // names the loops in the messages ("run workers")

	since atomic.Int64 // unix nanos of the outage's first error; 0: up
}

// Failed reports whether err is an outage (IsUnavailable), logging the
// start of one. The caller logs any other error itself and should back
// off while the outage lasts.
func (o *Outage) Failed(err error) bool {
	if !IsUnavailable(err) {
		return false
	}
	if o.since.CompareAndSwap(0, time.Now().UnixNano()) {
		o.Log.Warn("database unavailable: "+o.What+" pause until it is back", "error", err)
	}
	return true
}

// Succeeded marks the database reachable again, logging the end of an
// outage when one was going on.
func (o *Outage) Succeeded() {
	if o.since.Load() == 0 {
		return
	}
	if s := o.since.Swap(0); s != 0 {
		o.Log.Info("database available again: "+o.What+" resume",
			"outage", time.Since(time.Unix(0, s)).Round(time.Millisecond).String())
	}
}

// Down reports whether an outage is going on.
func (o *Outage) Down() bool { return o.since.Load() != 0 }

// Every calls fn every interval until ctx ends, for background loops such as
// sweepers. An error of fn is logged as a warning, except a database outage,
// which is logged once until it ends (see Outage); what names the loop in the
// log. fn returns again to be called once more at once (it handled a full
// batch and more may be due).
func Every(ctx context.Context, interval time.Duration, log *slog.Logger, what string, fn func(context.Context) (again bool, err error)) {
	outage := Outage{Log: log, What: what}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for ctx.Err() == nil {
			again, err := fn(ctx)
			switch {
			case err == nil:
				outage.Succeeded()
			case ctx.Err() != nil, outage.Failed(err):
			default:
				log.Warn(what, "error", err)
			}
			if err != nil || !again {
				break
			}
		}
	}
}
