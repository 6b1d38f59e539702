package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener holds LISTEN on one dedicated connection and hands every
// notification to the subscribers of its channel. The connection is
// re-opened with backoff when it fails; while it is down, subscribers are
// told nothing, so each must keep a polling fallback (and Reconnected lets
// them re-check after an outage).
type Listener struct {
	dsn      string
	channels []string
	log      *slog.Logger

	mu   sync.Mutex
	subs map[string][]func(payload string)
	up   []func()

	down time.Time // when the connection was lost (zero: connected or never was); Run's goroutine only
}

// NewListener returns a listener for channels on the database at dsn; Run
// starts it.
func NewListener(dsn string, log *slog.Logger, channels ...string) *Listener {
	return &Listener{dsn: dsn, channels: channels, log: log, subs: map[string][]func(string){}}
}

// Subscribe calls fn with the payload of every notification on channel. fn
// runs on the listener's goroutine and must not block.
func (l *Listener) Subscribe(channel string, fn func(payload string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.subs[channel] = append(l.subs[channel], fn)
}

// OnConnect calls fn every time the listening connection is (re)established.
func (l *Listener) OnConnect(fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.up = append(l.up, fn)
}

// Run listens until ctx is cancelled.
func (l *Listener) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		connected, err := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			backoff = 100 * time.Millisecond
		}
		if l.down.IsZero() {
			// Once per outage: the retries that follow are logged at debug.
			l.down = time.Now()
			l.log.Warn("notification listener disconnected; reconnecting with backoff", "error", err)
		} else {
			l.log.Debug("notification listener still disconnected", "error", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// listen holds one connection until it fails; connected tells whether it
// got as far as listening.
func (l *Listener) listen(ctx context.Context) (connected bool, err error) {
	cfg, err := pgx.ParseConfig(l.dsn)
	if err != nil {
		return false, err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range l.channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return false, err
		}
	}
	if !l.down.IsZero() {
		l.log.Info("notification listener reconnected", "outage", time.Since(l.down).Round(time.Millisecond).String())
		l.down = time.Time{}
	}
	l.mu.Lock()
	up := append([]func(){}, l.up...)
	l.mu.Unlock()
	for _, fn := range up {
		fn()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		l.mu.Lock()
		subs := l.subs[n.Channel]
		l.mu.Unlock()
		for _, fn := range subs {
			fn(n.Payload)
		}
	}
}
