package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/weftdev/weft/internal/postgres"
)

// DefaultSweepInterval is how often the sweeper deletes expired items when
// no interval is configured. Expired items are invisible at once; the
// sweeper only gives their space back, so it need not run often.
const DefaultSweepInterval = time.Minute

// StartSweeper starts the loop that deletes expired items every interval
// (<= 0: DefaultSweepInterval) until ctx ends, and returns a function that
// waits for the loop to stop. A database outage is logged once (not once per
// tick) and the loop carries on when the database is back.
func (s *Store) StartSweeper(ctx context.Context, interval time.Duration, log *slog.Logger) (wait func()) {
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	outage := &postgres.Outage{Log: log, What: "store sweeper"}
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			n, err := s.Sweep(ctx)
			switch {
			case err == nil:
				outage.Succeeded()
			case ctx.Err() != nil, outage.Failed(err):
			default:
				log.Warn("store sweeper", "error", err)
			}
			if n > 0 {
				log.Debug("store sweeper deleted expired items", "count", n)
			}
		}
	})
	return wg.Wait
}
