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
	var wg sync.WaitGroup
	wg.Go(func() {
		postgres.Every(ctx, interval, log, "store sweeper", func(ctx context.Context) (bool, error) {
			n, err := s.Sweep(ctx)
			if n > 0 {
				log.Debug("store sweeper deleted expired items", "count", n)
			}
			return false, err
		})
	})
	return wg.Wait
}
