package store

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres"
)

// IndexerConfig tunes the indexer; zero fields take the defaults.
type IndexerConfig struct {
	// Batch is how many pending rows one claim takes (default 64); their
	// distinct texts go to the endpoint in as few requests as its limits
	// allow.
	Batch int
	// Lease is how long a claim lasts (default 2m): rows of an indexer that
	// dies are claimable again after it.
	Lease time.Duration
	// Backoff is the delay after a row's first failure (default 1s); it
	// doubles with every further failure up to MaxBackoff (default 1h),
	// with ±25 % jitter.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Poll is the longest the indexer sleeps without a notification
	// (default 5s): the fallback when a NOTIFY is missed.
	Poll time.Duration
}

func (c IndexerConfig) withDefaults() IndexerConfig {
	if c.Batch <= 0 {
		c.Batch = 64
	}
	if c.Lease <= 0 {
		c.Lease = 2 * time.Minute
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = time.Hour
	}
	c.MaxBackoff = max(c.MaxBackoff, c.Backoff)
	if c.Poll <= 0 {
		c.Poll = 5 * time.Second
	}
	return c
}

// StartIndexer starts the loop that embeds pending vectors until ctx ends,
// and returns a function that waits for it to stop. It wakes on a put's
// notification on l (which the caller runs), when the next failed row is
// due, and at least every Poll. Every replica runs one: claims skip rows
// another holds. It does nothing without an index.
func (s *Store) StartIndexer(ctx context.Context, l *postgres.Listener, cfg IndexerConfig, log *slog.Logger) (wait func()) {
	if s.index == nil {
		return func() {}
	}
	cfg = cfg.withDefaults()
	wake := make(chan struct{}, 1)
	poke := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	if l != nil {
		l.Subscribe(NotifyChannel, func(string) { poke() })
		l.OnConnect(poke)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		outage := postgres.Outage{Log: log, What: "store indexer"}
		for ctx.Err() == nil {
			err := s.indexPending(ctx, cfg, log)
			sleep := cfg.Poll
			if err == nil {
				outage.Succeeded()
				d, ok, derr := s.nextDue(ctx)
				err = derr
				if ok {
					sleep = min(max(d, 5*time.Millisecond), cfg.Poll)
				}
			}
			switch {
			case err == nil, ctx.Err() != nil, outage.Failed(err):
			default:
				log.Warn("store indexer", "error", err)
			}
			t := time.NewTimer(sleep)
			select {
			case <-ctx.Done():
			case <-wake:
			case <-t.C:
			}
			t.Stop()
		}
	})
	return wg.Wait
}

// indexPending claims and embeds batches until none is due. An endpoint
// failure is not an error here: the rows are rescheduled and logged.
func (s *Store) indexPending(ctx context.Context, cfg IndexerConfig, log *slog.Logger) error {
	for ctx.Err() == nil {
		token := uuid.New()
		claimed, err := s.claimVectors(ctx, token, cfg.Lease, cfg.Batch)
		if err != nil || len(claimed) == 0 {
			return err
		}
		slices.SortFunc(claimed, func(a, b claimedVector) int { return cmp.Compare(a.ID, b.ID) })
		if err := s.embedClaimed(ctx, cfg, token, claimed, log); err != nil {
			return err
		}
		if len(claimed) < cfg.Batch {
			return nil
		}
	}
	return nil
}

// embedClaimed embeds the distinct texts of claimed and saves the vectors.
// When the endpoint refuses a batch's input, each text is sent alone so
// that one bad text (too long, say) does not hold back the others; the
// rows that still fail are rescheduled with backoff.
func (s *Store) embedClaimed(ctx context.Context, cfg IndexerConfig, token uuid.UUID, claimed []claimedVector, log *slog.Logger) error {
	texts, at := distinctTexts(claimed)
	vecs, err := s.embedder.Embed(ctx, texts)
	if err == nil {
		return s.saveClaimed(ctx, token, claimed, vecs, at)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	ee, ok := isEmbedError(err)
	if !ok {
		return err
	}
	if !ee.InputRefused() || len(texts) == 1 {
		log.Warn("store indexer: embedding failed; retrying with backoff", "rows", len(claimed), "error", err)
		return s.failVectors(ctx, token, ids(claimed), err.Error(), cfg.Backoff, cfg.MaxBackoff)
	}
	for _, text := range texts {
		rows := rowsOf(claimed, text)
		vec, err := s.embedder.Embed(ctx, []string{text})
		if err == nil {
			err = s.saveClaimed(ctx, token, rows, vec, map[string]int{text: 0})
			if err != nil {
				return err
			}
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, ok := isEmbedError(err); !ok {
			return err
		}
		log.Warn("store indexer: embedding failed; retrying with backoff", "rows", len(rows), "error", err)
		if err := s.failVectors(ctx, token, ids(rows), err.Error(), cfg.Backoff, cfg.MaxBackoff); err != nil {
			return err
		}
	}
	return nil
}

// saveClaimed saves the vector of each claimed row: vecs[at[its text]].
func (s *Store) saveClaimed(ctx context.Context, token uuid.UUID, claimed []claimedVector, vecs [][]float32, at map[string]int) error {
	byRow := make([][]float32, len(claimed))
	for i, c := range claimed {
		byRow[i] = vecs[at[c.Text]]
	}
	_, err := s.saveVectors(ctx, token, claimed, byRow, s.index.VectorModel())
	return err
}

// distinctTexts returns the texts of claimed once each, and where each is.
func distinctTexts(claimed []claimedVector) ([]string, map[string]int) {
	at := map[string]int{}
	var texts []string
	for _, c := range claimed {
		if _, ok := at[c.Text]; !ok {
			at[c.Text] = len(texts)
			texts = append(texts, c.Text)
		}
	}
	return texts, at
}

func rowsOf(claimed []claimedVector, text string) []claimedVector {
	var out []claimedVector
	for _, c := range claimed {
		if c.Text == text {
			out = append(out, c)
		}
	}
	return out
}

func ids(claimed []claimedVector) []int64 {
	out := make([]int64, len(claimed))
	for i, c := range claimed {
		out[i] = c.ID
	}
	return out
}
