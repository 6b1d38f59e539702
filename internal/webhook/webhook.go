package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/tracing"
)

// Config tunes webhook delivery.
type Config struct {
	// SelfURL is this server's own base URL ("http://127.0.0.1:8123"): a
	// webhook that is a path ("/hooks/done") is POSTed there.
	SelfURL string
	// AllowPrivate lets webhooks reach addresses that are not globally
	// reachable: loopback, private, link-local, shared address space and
	// the rest of the IANA special-purpose blocks, multicast (default
	// false: such a delivery fails at once; a path on this server is
	// always allowed). See addr.go.
	AllowPrivate bool
	// Backoff is the delay after a webhook's first failed attempt, doubled
	// after each further one (with jitter, capped at 5 min); default 1 s.
	Backoff time.Duration
	// Timeout limits one webhook POST (default 10 s).
	Timeout time.Duration
	// PollInterval is how often the delivery loop looks for due deliveries
	// at least (a run ended on another replica); default 1 s.
	PollInterval time.Duration
	// Policy is langgraph.json's webhooks section (weft dev; nil: none): the
	// URLs deliveries may go to, checked again before each one, the headers
	// they carry and the fields they send (policy.go).
	Policy *Policy
	// Metrics count delivery attempts by outcome (nil: not counted).
	Metrics *metrics.Metrics
	// Tracer traces deliveries, each a span in its run's trace (nil: no
	// span; the run's traceparent is still sent).
	Tracer trace.Tracer
	// Disabled sends no webhook (langgraph.json's http.disable_webhooks):
	// runs with one still run, and each delivery ends failed with that
	// reason, unsent, as LangGraph's server skips them.
	Disabled bool
}

// Service delivers the webhooks of ended runs.
type Service struct {
	db  *pgxpool.Pool
	log *slog.Logger
	cfg Config
	// outage logs a database outage once, not once per tick.
	outage *postgres.Outage
}

// NewService returns a Service; Start runs its delivery loop.
func NewService(db *pgxpool.Pool, log *slog.Logger, cfg Config) *Service {
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	return &Service{db: db, log: log, cfg: cfg, outage: &postgres.Outage{Log: log, What: "webhook delivery"}}
}

// Start runs the delivery loop until ctx is done; the returned function
// waits for it to stop.
func (s *Service) Start(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() { s.webhookLoop(ctx) })
	return wg.Wait
}

const (
	// webhookMaxAttempts is how many POSTs a delivery gets before it fails.
	webhookMaxAttempts = 8
	// webhookMaxBackoff caps the delay between attempts.
	webhookMaxBackoff = 5 * time.Minute
	// webhookBatch is how many deliveries one claim takes (sent concurrently).
	webhookBatch = 16
)

// PendingSet returns the SET clause that marks a run's webhook delivery
// pending and due when its kwargs name a webhook, for the statements of
// other packages that end a run (the coordinator's, package runs'), so
// marking costs no round trip. The columns are this package's: the clause
// is its only writer outside the delivery loop.
func PendingSet() string { return pendingSet }

const pendingSet = `webhook_state = CASE WHEN nullif(kwargs->>'webhook', '') IS NOT NULL THEN 'pending' ELSE webhook_state END,
				webhook_next_at = CASE WHEN nullif(kwargs->>'webhook', '') IS NOT NULL THEN now() ELSE webhook_next_at END,
				webhook_attempts = CASE WHEN nullif(kwargs->>'webhook', '') IS NOT NULL THEN 0 ELSE webhook_attempts END`

// Webhook delivery states, as stored in runs.webhook_state.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed"
)

// Validate checks a run's webhook at creation: an absolute http(s) URL
// with a host, or a path on this server (starting with "/"). "" is none.
// Policy.Validate checks a langgraph.json webhooks policy besides.
func Validate(w string) error { return (*Policy)(nil).Validate(w) }

// webhookDelivery is one claimed delivery: what the POST needs.
type webhookDelivery struct {
	RunID             uuid.UUID       `db:"run_id"`
	ThreadID          uuid.UUID       `db:"thread_id"`
	AssistantID       uuid.UUID       `db:"assistant_id"`
	CreatedAt         httpx.Time      `db:"created_at"`
	UpdatedAt         httpx.Time      `db:"updated_at"`
	StartedAt         httpx.Time      `db:"started_at"`
	FinishedAt        httpx.Time      `db:"finished_at"`
	Status            string          `db:"status"`
	Metadata          json.RawMessage `db:"metadata"`
	Kwargs            json.RawMessage `db:"kwargs"`
	MultitaskStrategy string          `db:"multitask_strategy"`
	Error             json.RawMessage `db:"error"`
	Result            json.RawMessage `db:"result"`
	ResultRef         []byte          `db:"result_ref"`
	ThreadValues      json.RawMessage `db:"thread_values"`
	Attempt           int             `db:"webhook_attempts"`
	URL               string          `db:"webhook"`
	Traceparent       *string         `db:"traceparent"`
}

// webhookClaimSQL claims up to $1 due deliveries: each gets its next
// attempt number and is leased for $2 (its next_at pushed past the send).
const webhookClaimSQL = `
	UPDATE runs r SET webhook_attempts = r.webhook_attempts + 1,
		webhook_next_at = now() + $2::interval
	FROM (
		SELECT run_id FROM runs
		WHERE webhook_state = 'pending' AND webhook_next_at <= now()
		ORDER BY webhook_next_at
		FOR UPDATE SKIP LOCKED
		LIMIT $1
	) due
	WHERE r.run_id = due.run_id
	RETURNING r.run_id, r.thread_id, r.assistant_id, r.created_at, r.updated_at, r.started_at, r.finished_at,
		r.status, weft_run_metadata(r.metadata, r.assistant_id) AS metadata, weft_run_kwargs(r.kwargs, r.thread_id) AS kwargs, r.multitask_strategy, r.error, r.result, r.result_ref,
		(SELECT weft_thread_values(t.thread_id, t."values", t.values_refs) FROM threads t WHERE t.thread_id = r.thread_id) AS thread_values,
		r.webhook_attempts, coalesce(r.kwargs->>'webhook', '') AS webhook, r.traceparent`

// webhookClaim claims due webhook deliveries (any replica; SKIP LOCKED).
func (s *Service) webhookClaim(ctx context.Context, limit int) ([]webhookDelivery, error) {
	rows, err := s.db.Query(ctx, webhookClaimSQL, limit, s.webhookLease())
	if err != nil {
		return nil, err
	}
	ds, err := pgx.CollectRows(rows, pgx.RowToStructByName[webhookDelivery])
	if err != nil {
		return nil, err
	}
	// Encryption at rest: the run's input and command (kwargs), its result
	// and the thread's values are stored sealed; the POST carries them plain.
	kr := crypt.FromContext(ctx)
	for i := range ds {
		d := &ds[i]
		if d.Kwargs, err = kr.OpenFields(d.Kwargs, "input", "command"); err != nil {
			return nil, fmt.Errorf("run %s kwargs: %w", d.RunID, err)
		}
		if d.Result, err = kr.OpenJSON(d.Result); err != nil {
			return nil, fmt.Errorf("run %s result: %w", d.RunID, err)
		}
		// A result stored as a checkpoint reference is rendered; should that
		// fail, the payload carries the thread's values (as for a run that
		// recorded no result) rather than holding up every delivery.
		if d.Result, err = eventlog.RenderResult(ctx, s.db, d.ThreadID, d.RunID, d.Result, d.ResultRef); err != nil {
			s.log.Warn("webhook: run result", "run_id", d.RunID, "error", err)
			d.Result = nil
		}
		if d.ThreadValues, err = kr.OpenJSON(d.ThreadValues); err != nil {
			return nil, fmt.Errorf("thread %s values: %w", d.ThreadID, err)
		}
	}
	return ds, nil
}

// webhookLease is how long a claimed delivery is this replica's: past the
// send's timeout, with room for recording the outcome.
func (s *Service) webhookLease() time.Duration { return 2*s.cfg.Timeout + 5*time.Second }

// webhookLoop delivers due webhooks until ctx is done. It wakes when the
// earliest pending delivery is due, and at least every PollInterval (a run
// ended on another replica).
func (s *Service) webhookLoop(ctx context.Context) {
	clients := webhookClients{external: s.webhookClient(s.cfg.Policy.addrCheck(s.cfg.AllowPrivate)), self: s.webhookClient(nil)}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		n, err := s.deliverDue(ctx, clients)
		switch {
		case err == nil:
			s.outage.Succeeded()
		case ctx.Err() != nil, s.outage.Failed(err):
		default:
			s.log.Warn("webhook delivery", "error", err)
		}
		wait := s.cfg.PollInterval
		if n == webhookBatch {
			wait = 0 // more may be due
		} else if next, err := s.webhookNextDue(ctx); err == nil && next != nil {
			wait = min(wait, max(time.Until(*next), 0))
		}
		timer.Reset(wait)
	}
}

// webhookNextDue is when the earliest pending delivery is due (nil: none).
func (s *Service) webhookNextDue(ctx context.Context) (*time.Time, error) {
	var next *time.Time
	err := s.db.QueryRow(ctx, `SELECT min(webhook_next_at) FROM runs WHERE webhook_state = 'pending'`).Scan(&next)
	return next, err
}

// deliverDue claims one batch of due deliveries and sends them
// concurrently; it returns how many it claimed.
func (s *Service) deliverDue(ctx context.Context, clients webhookClients) (int, error) {
	batch, err := s.webhookClaim(ctx, webhookBatch)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for i := range batch {
		wg.Go(func() { s.deliver(ctx, clients, &batch[i]) })
	}
	wg.Wait()
	return len(batch), nil
}

// deliver sends one attempt of d and records its outcome.
func (s *Service) deliver(ctx context.Context, clients webhookClients, d *webhookDelivery) {
	status, errText, final := 0, "", false
	if d.Attempt > webhookMaxAttempts {
		// The sender of the last attempt stopped before recording it.
		errText = fmt.Sprintf("gave up after %d attempts (the last one was interrupted)", webhookMaxAttempts)
		final = true
	} else if s.cfg.Disabled {
		errText, final = "not sent: webhooks are disabled (http.disable_webhooks)", true
		s.log.Info("webhooks disabled, skipping webhook call", "run_id", d.RunID)
	} else {
		status, errText, final = s.send(ctx, clients, d)
	}
	if ctx.Err() != nil {
		return // shutting down: the lease runs out and another replica (or restart) retries
	}
	state, next := WebhookPending, time.Duration(0)
	switch {
	case status >= 200 && status < 300:
		state = WebhookDelivered
	case final || d.Attempt >= webhookMaxAttempts:
		state = WebhookFailed
	default:
		next = webhookBackoff(s.cfg.Backoff, d.Attempt)
	}
	var lastStatus *int
	if status != 0 {
		lastStatus = &status
	}
	var lastErr *string
	if errText != "" {
		lastErr = &errText
	}
	_, err := s.db.Exec(context.WithoutCancel(ctx), `UPDATE runs SET webhook_state = $3, webhook_last_status = $4,
		webhook_last_error = $5, webhook_next_at = CASE WHEN $3 = 'pending' THEN now() + $6::interval END,
		webhook_delivered_at = CASE WHEN $3 = 'delivered' THEN now() END
		WHERE run_id = $1 AND webhook_state = 'pending' AND webhook_attempts = $2`,
		d.RunID, d.Attempt, state, lastStatus, lastErr, next)
	if err != nil {
		s.log.Warn("webhook: record attempt", "run_id", d.RunID, "error", err)
		return
	}
	switch state {
	case WebhookDelivered:
		s.cfg.Metrics.WebhookAttempt(metrics.WebhookDelivered)
	case WebhookFailed:
		s.cfg.Metrics.WebhookAttempt(metrics.WebhookFailed)
	default:
		s.cfg.Metrics.WebhookAttempt(metrics.WebhookRetrying)
	}
	if state != WebhookDelivered && !s.cfg.Disabled {
		s.log.Warn("webhook attempt failed", "run_id", d.RunID, "attempt", d.Attempt, "state", state,
			"status", status, "error", errText)
	}
}

// webhookBackoff is the delay before the attempt after attempt n:
// base·2^(n-1), capped at webhookMaxBackoff, with jitter (half to all of it).
func webhookBackoff(base time.Duration, n int) time.Duration {
	d := base << min(n-1, 30)
	if d <= 0 || d > webhookMaxBackoff {
		d = webhookMaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// webhookBody is the POSTed document: the Run object's fields with the
// run's times, its final values and, on failure, its error message.
func webhookBody(d *webhookDelivery, now time.Time, policy *Policy) ([]byte, error) {
	body := map[string]any{
		"run_id": d.RunID, "thread_id": d.ThreadID, "assistant_id": d.AssistantID,
		"created_at": d.CreatedAt, "updated_at": d.UpdatedAt, "status": d.Status,
		"metadata": d.Metadata, "kwargs": d.Kwargs, "multitask_strategy": d.MultitaskStrategy,
		"run_started_at": d.StartedAt, "run_ended_at": d.FinishedAt,
		"webhook_sent_at": httpx.Time{Time: now}, "values": webhookValues(d),
	}
	if jsonv.Present(d.Error) {
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		msg := string(d.Error)
		if json.Unmarshal(d.Error, &e) == nil && (e.Message != "" || e.Error != "") {
			msg = e.Message
			if msg == "" {
				msg = e.Error
			}
		}
		body["error"] = msg
	}
	policy.filterFields(body) // webhooks.allowed_fields
	return json.Marshal(body)
}

// webhookValues are the run's final values: the values its end recorded
// (without "__interrupt__"), else the thread's values (a failed or
// cancelled run), else null.
func webhookValues(d *webhookDelivery) json.RawMessage {
	if jsonv.Present(d.Result) {
		var vals map[string]json.RawMessage
		if json.Unmarshal(d.Result, &vals) == nil && vals != nil {
			if _, failed := vals["__error__"]; !failed {
				delete(vals, "__interrupt__")
				return jsonv.Must(vals)
			}
		}
	}
	if jsonv.Present(d.ThreadValues) {
		return d.ThreadValues
	}
	return json.RawMessage("null")
}

// send POSTs one attempt of d. It returns the response status (0 when none
// came), an error text for anything but a 2xx, and whether the delivery
// must fail at once (the address was refused, or the URL is unusable).
func (s *Service) send(ctx context.Context, clients webhookClients, d *webhookDelivery) (status int, errText string, final bool) {
	target, client := d.URL, clients.external
	// The policy may have changed since the run was created (a restart
	// with another langgraph.json): it is held again, as LangGraph's server
	// does before each call.
	if s.cfg.Policy != nil {
		if err := s.cfg.Policy.Validate(target); err != nil {
			return 0, "webhook refused: " + err.Error(), true
		}
	}
	if strings.HasPrefix(target, "/") {
		if s.cfg.SelfURL == "" {
			return 0, "webhook is a path but this server's own URL is unknown", true
		}
		target, client = strings.TrimSuffix(s.cfg.SelfURL, "/")+target, clients.self
	}
	body, err := webhookBody(d, time.Now(), s.cfg.Policy)
	if err != nil {
		return 0, "encode body: " + err.Error(), true
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	// The delivery is part of its run's trace: a span of its own under the
	// run's traceparent, or that traceparent as it is when tracing is off.
	if d.Traceparent != nil {
		ctx = tracing.WithRemoteParent(ctx, *d.Traceparent)
	}
	ctx, span := tracing.Start(ctx, s.cfg.Tracer, "weft.webhook", trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(attribute.String("weft.run_id", d.RunID.String()), attribute.Int("weft.webhook.attempt", d.Attempt))
		defer func() {
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if errText != "" {
				span.SetStatus(codes.Error, errText)
			}
		}()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return 0, "invalid webhook URL: " + err.Error(), true
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "weft-webhook")
	if s.cfg.Policy != nil {
		for k, v := range s.cfg.Policy.Headers { // webhooks.headers
			req.Header.Set(k, v)
		}
	}
	tracing.Inject(ctx, req.Header)
	resp, err := client.Do(req)
	if err != nil {
		var ref *refusedAddrError
		if errors.As(err, &ref) {
			return 0, ref.Error(), true
		}
		return 0, err.Error(), false
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, "", false
	}
	text := "HTTP " + resp.Status
	if s := strings.TrimSpace(string(snippet)); s != "" {
		text += ": " + s
	}
	return resp.StatusCode, text, false
}

// webhookClients are the delivery clients: external URLs go through the
// address guard (unless WebhookAllowPrivate); paths on this server go to
// its own URL through a client of their own, so a connection opened to a
// guarded address is never reused for an external URL.
type webhookClients struct{ external, self *http.Client }

// refusedAddrError is a webhook host that resolves to an address deliveries
// may not reach.
type refusedAddrError struct {
	host string
	ip   net.IP
	kind string
}

func (e *refusedAddrError) Error() string {
	fix := " (allow with -webhook-allow-private)"
	if strings.Contains(e.kind, "webhooks.url.") { // refused by langgraph.json's policy, whatever the flag says
		fix = ""
	}
	return fmt.Sprintf("webhook refused: %s resolves to %s address %s%s", e.host, e.kind, e.ip, fix)
}

// webhookClient is an HTTP client of deliveries: no proxy, no redirects
// (a 3xx is a failed attempt, so no redirect can lead a delivery past the
// guard), and a dialer that resolves the host itself and dials the resolved
// address. With a check (Policy.addrCheck) it refuses the host when the
// check refuses any of its addresses (by default, one that is not a
// globally reachable unicast address: addr.go).
func (s *Service) webhookClient(check func(host string, ip net.IP) string) *http.Client {
	dialer := &net.Dialer{Timeout: s.cfg.Timeout, KeepAlive: 30 * time.Second}
	dial := guardedDial(check, net.DefaultResolver.LookupIPAddr, dialer.DialContext)
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dial,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          32,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   s.cfg.Timeout,
			ResponseHeaderTimeout: s.cfg.Timeout,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
