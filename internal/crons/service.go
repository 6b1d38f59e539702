package crons

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
	"github.com/weftdev/weft/internal/threads"
)

// Config tunes crons.
type Config struct {
	// Interval is how often each replica looks for due crons (default
	// DefaultInterval). A tick fires at most this long after its time.
	Interval time.Duration
	// Clock is the time crons are scheduled by instead of the database's
	// now() (nil: now(), the same on every replica). Tests move it.
	Clock func() time.Time
	// Batch is how many due crons one transaction fires (default 100).
	Batch int
	// Threads gives the default ttl of a thread a cron creates (nil: none).
	Threads *threads.Store
}

// DefaultInterval is how often each replica looks for due crons when no
// interval is configured: one indexed query a second, and a tick fires
// within a second of its time.
const DefaultInterval = time.Second

func (c *Config) defaults() {
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Batch <= 0 {
		c.Batch = 100
	}
}

// Service keeps crons and fires them.
type Service struct {
	db   *pgxpool.Pool
	runs *runs.Service
	log  *slog.Logger
	cfg  Config
}

// NewService returns a Service; Start runs its scheduler.
func NewService(db *pgxpool.Pool, rs *runs.Service, log *slog.Logger, cfg Config) *Service {
	cfg.defaults()
	return &Service{db: db, runs: rs, log: log, cfg: cfg}
}

// clock is the clock's reading as a statement argument (nil: the
// database's now()).
func (s *Service) clock() *time.Time {
	if s.cfg.Clock == nil {
		return nil
	}
	t := s.cfg.Clock()
	return &t
}

// Now is the time crons are scheduled by (the clock's, or the database's).
func (s *Service) Now(ctx context.Context) (time.Time, error) { return cronNow(ctx, s.db, s.clock()) }

// CreateParams are the inputs of Create (a create body, see
// CreateRequest).
type CreateParams struct {
	// ThreadID is the cron's thread (nil: a stateless cron, a new thread
	// for each run).
	ThreadID       *uuid.UUID
	AssistantRef   string // UUID or graph name
	Schedule       string
	Timezone       string
	EndTime        time.Time // zero: no end
	Enabled        *bool     // nil: true
	OnRunCompleted string    // stateless only: delete (default) or keep
	Metadata       map[string]any
	Payload        Payload // AssistantID is filled in
}

// Create validates a cron (schedule, timezone, and its payload as a run
// would be validated) and inserts it with its first tick after now. With
// payload.if_not_exists=create a missing thread is created with it.
func (s *Service) Create(ctx context.Context, p CreateParams) (*Cron, error) {
	sched, err := parseSchedule(p.Schedule, p.Timezone)
	if err != nil {
		return nil, err
	}
	c := &Cron{CronID: uuid.Must(uuid.NewV7()), ThreadID: p.ThreadID, Payload: p.Payload, Metadata: jsonObject(p.Metadata)}
	if p.ThreadID == nil {
		switch p.OnRunCompleted {
		case "":
			p.OnRunCompleted = OnRunCompletedDelete
		case OnRunCompletedDelete, OnRunCompletedKeep:
		default:
			return nil, apperr.Errorf(apperr.Invalid, "Invalid on_run_completed %q: must be delete or keep", p.OnRunCompleted)
		}
		c.OnRunCompleted = &p.OnRunCompleted
	}
	assistantID, graphID, err := s.validate(ctx, c, p.AssistantRef)
	if err != nil {
		return nil, err
	}
	c.AssistantID, c.Payload.AssistantID = assistantID, assistantID.String()
	enabled := p.Enabled == nil || *p.Enabled
	var out *Cron
	err = postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		now, err := cronNow(ctx, tx, s.clock())
		if err != nil {
			return err
		}
		if p.ThreadID != nil && p.Payload.IfNotExists == "create" {
			md := map[string]any{"graph_id": graphID, "assistant_id": assistantID.String()}
			if _, err := tx.Exec(ctx, threads.InsertDefault, s.cfg.Threads.InsertDefaultArgs(*p.ThreadID, md, auth.Tenant(ctx))...); err != nil {
				return err
			}
		}
		out, err = CronInsert(ctx, tx, insertParams{CronID: c.CronID, AssistantID: assistantID, ThreadID: p.ThreadID,
			Schedule: strings.TrimSpace(p.Schedule), Timezone: timezoneName(p.Timezone), EndTime: nullTime(p.EndTime),
			Enabled: enabled, OnRunCompleted: c.OnRunCompleted, Payload: c.Payload, Metadata: p.Metadata,
			NextRunDate: nullTime(sched.nextRun(now, p.EndTime))})
		return mapInsertErr(err, p.ThreadID, assistantID)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// validate checks c's runs as they would be created now: assistant (ref),
// graph, input, nodes, webhook, strategies. It returns the assistant and
// its graph.
func (s *Service) validate(ctx context.Context, c *Cron, ref string) (uuid.UUID, string, error) {
	req, err := c.runRequest()
	if err != nil {
		return uuid.Nil, "", err
	}
	req.AssistantID = ref
	var tid uuid.UUID
	if c.ThreadID != nil {
		tid = *c.ThreadID
	}
	return s.runs.Validate(ctx, tid, req)
}

// mapInsertErr turns a foreign-key failure of a cron's insert into the
// 404 of what is missing.
func mapInsertErr(err error, threadID *uuid.UUID, assistantID uuid.UUID) error {
	var pgErr *pgconn.PgError
	if err == nil || !errors.As(err, &pgErr) || !postgres.IsForeignKeyViolation(err) {
		return err
	}
	if pgErr.ConstraintName == "crons_thread_id_fkey" && threadID != nil {
		return apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", *threadID)
	}
	return apperr.Errorf(apperr.NotFound, "Assistant not found: %s", assistantID)
}

// Get returns a cron.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*Cron, error) {
	return CronGet(ctx, s.db, id, false)
}

// PatchParams are the changes of Patch; nil fields stay as they are.
type PatchParams struct {
	Schedule       *string
	Timezone       *string
	EndTime        timeField // Set with a zero Time: no end
	Enabled        *bool
	OnRunCompleted *string        // stateless crons only (ignored on a thread's)
	Metadata       map[string]any // merged into the cron's (shallowly)

	Input             json.RawMessage // given (even null): replaces
	Config            map[string]any
	Context           map[string]any
	Webhook           json.RawMessage // a URL; null or "" removes it
	InterruptBefore   *runs.StringList
	InterruptAfter    *runs.StringList
	MultitaskStrategy *string
	StreamMode        *runs.StringList
	StreamSubgraphs   *bool
	StreamResumable   *bool
	Durability        *string
}

// Patch changes a cron in one transaction, its row locked (a firing in
// progress commits first). The result is validated like a new cron; a
// change of schedule or timezone, turning the cron on, or a new end time
// on a cron that had ended moves the next tick to the first one after
// now (ticks missed while it was off are not fired).
func (s *Service) Patch(ctx context.Context, id uuid.UUID, p PatchParams) (*Cron, error) {
	var out *Cron
	err := postgres.WithTx(ctx, s.db, func(tx pgx.Tx) error {
		c, err := CronGet(ctx, tx, id, true)
		if err != nil {
			return err
		}
		wasEnabled, oldSchedule, oldTZ, oldEnd := c.Enabled, c.Schedule, c.Timezone, c.EndTime.Time
		if err := p.apply(c); err != nil {
			return err
		}
		sched, err := parseSchedule(c.Schedule, c.Timezone)
		if err != nil {
			return err
		}
		c.Schedule, c.Timezone = strings.TrimSpace(c.Schedule), timezoneName(c.Timezone)
		if _, _, err := s.validate(ctx, c, c.AssistantID.String()); err != nil {
			return err
		}
		endChanged := !c.EndTime.Time.Equal(oldEnd)
		switch {
		case c.Schedule != oldSchedule || c.Timezone != oldTZ || c.Enabled && !wasEnabled ||
			endChanged && c.NextRunDate.IsZero():
			now, err := cronNow(ctx, tx, s.clock())
			if err != nil {
				return err
			}
			c.NextRunDate.Time = sched.nextRun(now, c.EndTime.Time)
		case endChanged && !c.EndTime.IsZero() && c.NextRunDate.After(c.EndTime.Time):
			c.NextRunDate.Time = time.Time{}
		}
		out, err = CronUpdate(ctx, tx, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// apply writes p's changes into c.
func (p *PatchParams) apply(c *Cron) error {
	if p.Schedule != nil {
		c.Schedule = *p.Schedule
	}
	if p.Timezone != nil {
		c.Timezone = *p.Timezone
	}
	if p.EndTime.Set {
		c.EndTime.Time = p.EndTime.Time
	}
	if p.Enabled != nil {
		c.Enabled = *p.Enabled
	}
	if p.OnRunCompleted != nil && c.ThreadID == nil {
		switch *p.OnRunCompleted {
		case OnRunCompletedDelete, OnRunCompletedKeep:
			v := *p.OnRunCompleted
			c.OnRunCompleted = &v
		default:
			return apperr.Errorf(apperr.Invalid, "Invalid on_run_completed %q: must be delete or keep", *p.OnRunCompleted)
		}
	}
	if p.Metadata != nil {
		md := map[string]any{}
		if err := jsonv.Decode(c.Metadata, &md); err != nil {
			return err
		}
		for k, v := range p.Metadata {
			md[k] = v
		}
		c.Metadata = jsonObject(md)
	}
	pl := &c.Payload
	if p.Input != nil {
		pl.Input = p.Input
	}
	if p.Config != nil {
		pl.Config = p.Config
	}
	if p.Context != nil {
		pl.Context = p.Context
	}
	if p.Webhook != nil {
		var hook *string
		if err := json.Unmarshal(p.Webhook, &hook); err != nil {
			return apperr.Errorf(apperr.Invalid, "Invalid webhook: must be a URL, or null to remove it")
		}
		if hook != nil && *hook == "" {
			hook = nil
		}
		pl.Webhook = hook
	}
	if p.InterruptBefore != nil {
		pl.InterruptBefore = *p.InterruptBefore
	}
	if p.InterruptAfter != nil {
		pl.InterruptAfter = *p.InterruptAfter
	}
	if p.MultitaskStrategy != nil {
		pl.MultitaskStrategy = *p.MultitaskStrategy
	}
	if p.StreamMode != nil {
		pl.StreamMode = *p.StreamMode
	}
	if p.StreamSubgraphs != nil {
		pl.StreamSubgraphs = *p.StreamSubgraphs
	}
	if p.StreamResumable != nil {
		pl.StreamResumable = *p.StreamResumable
	}
	if p.Durability != nil {
		pl.Durability = *p.Durability
	}
	return nil
}

// Delete deletes a cron (after a firing of it in progress). Runs it
// created are left as they are.
func (s *Service) Delete(ctx context.Context, id uuid.UUID) error {
	return CronDelete(ctx, s.db, id)
}

// Search passes one page of crons to emit.
func (s *Service) Search(ctx context.Context, p SearchParams, emit func(*Cron) (stop bool, err error)) (int, bool, error) {
	return CronSearch(ctx, s.db, p, emit)
}

// Count counts the crons f matches.
func (s *Service) Count(ctx context.Context, f Filter) (int64, error) {
	return CronCount(ctx, s.db, f)
}

// timezoneName is the stored name of a zone ("" is UTC).
func timezoneName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}
