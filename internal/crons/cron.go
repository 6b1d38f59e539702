package crons

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"
	_ "time/tzdata" // IANA zones without relying on the host's tz database (distroless images have none)

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/runs"
)

// On-run-completed policies of a stateless cron (what happens to the new
// thread of each run).
const (
	// OnRunCompletedDelete deletes the thread once the run ended (the
	// default): the run is temporary, like a stateless run nobody waits
	// for.
	OnRunCompletedDelete = "delete"
	// OnRunCompletedKeep keeps the thread, to read the run's result later.
	OnRunCompletedKeep = "keep"
)

// Cron is the Cron object of the API (reference §11).
type Cron struct {
	CronID      uuid.UUID  `db:"cron_id" json:"cron_id" validate:"required" format:"uuid"`
	AssistantID uuid.UUID  `db:"assistant_id" json:"assistant_id" validate:"required" format:"uuid"`
	ThreadID    *uuid.UUID `db:"thread_id" json:"thread_id" validate:"required" swaggertype:"string" format:"uuid" extensions:"x-nullable"`
	// OnRunCompleted is what happens to the thread of each run of a
	// stateless cron (null for a cron on a thread).
	OnRunCompleted *string `db:"on_run_completed" json:"on_run_completed" validate:"required" enums:"delete,keep" extensions:"x-nullable"`
	// EndTime is when the cron stops firing (null: never).
	EndTime httpx.Time `db:"end_time" json:"end_time" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	// Schedule is a 5-field cron expression (minute hour day-of-month
	// month day-of-week) or a descriptor such as @hourly.
	Schedule string `db:"schedule" json:"schedule" validate:"required" example:"*/5 * * * *"`
	// Timezone is the IANA zone the schedule is read in.
	Timezone  string     `db:"timezone" json:"timezone" validate:"required" example:"UTC"`
	CreatedAt httpx.Time `db:"created_at" json:"created_at" validate:"required" swaggertype:"string" format:"date-time"`
	UpdatedAt httpx.Time `db:"updated_at" json:"updated_at" validate:"required" swaggertype:"string" format:"date-time"`
	// UserID is the cron's owner (always null: Weft has no users yet).
	UserID *string `db:"user_id" json:"user_id" validate:"required" extensions:"x-nullable"`
	// Payload is what each run is created with.
	Payload Payload `db:"payload" json:"payload" validate:"required"`
	// NextRunDate is the next tick the cron fires at; null once it is past
	// the end time (it never fires again).
	NextRunDate httpx.Time      `db:"next_run_date" json:"next_run_date" validate:"required" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	Metadata    json.RawMessage `db:"metadata" json:"metadata" validate:"required" swaggertype:"object"`
	Enabled     bool            `db:"enabled" json:"enabled" validate:"required"`
	// TenantID owns the cron; its runs are created in this tenant.
	TenantID string `db:"tenant_id" json:"-"`
}

// Columns are the columns of a Cron, in the order RowToStructByName reads
// them.
const Columns = `cron_id, assistant_id, thread_id, on_run_completed, end_time, schedule, timezone,
	created_at, updated_at, user_id, payload, next_run_date, metadata, enabled, tenant_id`

// Payload is the run part of a cron: the fields of a run-create body
// (reference §6.2) each firing's run is created with. The cron's metadata
// (with cron_id) becomes the run's, and on_run_completed its on_completion.
type Payload struct {
	// AssistantID is the assistant's UUID (a graph name given at creation
	// is resolved to its system assistant).
	AssistantID       string          `json:"assistant_id" validate:"required" format:"uuid"`
	Input             json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	Config            map[string]any  `json:"config,omitempty"`
	Context           map[string]any  `json:"context,omitempty"`
	Webhook           *string         `json:"webhook,omitempty"`
	InterruptBefore   runs.StringList `json:"interrupt_before,omitempty" swaggertype:"array,string"`
	InterruptAfter    runs.StringList `json:"interrupt_after,omitempty" swaggertype:"array,string"`
	MultitaskStrategy string          `json:"multitask_strategy,omitempty" enums:"reject,enqueue,interrupt,rollback"`
	StreamMode        runs.StringList `json:"stream_mode,omitempty" swaggertype:"array,string"`
	StreamSubgraphs   bool            `json:"stream_subgraphs,omitempty"`
	StreamResumable   bool            `json:"stream_resumable,omitempty"`
	Durability        string          `json:"durability,omitempty" enums:"sync,async,exit"`
	CheckpointDuring  *bool           `json:"checkpoint_during,omitempty"`
	IfNotExists       string          `json:"if_not_exists,omitempty" enums:"create,reject"`
}

// runRequest is the run-create request of one firing of c (or of its
// validation): the payload, the cron's metadata with cron_id, and for a
// stateless cron its on_run_completed as on_completion.
func (c *Cron) runRequest() (*runs.CreateRequest, error) {
	md := map[string]any{}
	if len(c.Metadata) > 0 {
		if err := json.Unmarshal(c.Metadata, &md); err != nil {
			return nil, err
		}
	}
	md["cron_id"] = c.CronID.String()
	p := &c.Payload
	req := &runs.CreateRequest{
		AssistantID: c.AssistantID.String(), Input: p.Input, Metadata: md,
		Config: cloneMap(p.Config), Context: cloneMap(p.Context), Webhook: p.Webhook,
		InterruptBefore: runs.NodeList(p.InterruptBefore), InterruptAfter: runs.NodeList(p.InterruptAfter), MultitaskStrategy: p.MultitaskStrategy,
		StreamMode: runs.StreamModeList(p.StreamMode), StreamSubgraphs: p.StreamSubgraphs, StreamResumable: p.StreamResumable,
		Durability: p.Durability, CheckpointDuring: p.CheckpointDuring, IfNotExists: p.IfNotExists,
	}
	if c.OnRunCompleted != nil {
		req.OnCompletion = *c.OnRunCompleted
	}
	return req, nil
}

// cloneMap copies m through JSON, so that a run's creation never changes
// the cron's payload.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// parser reads 5-field cron expressions (minute hour dom month dow, with
// names, ranges, steps and "?") and the descriptors @yearly, @annually,
// @monthly, @weekly, @daily, @midnight and @hourly.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// schedule is a parsed cron expression read in a time zone.
type schedule struct {
	spec cron.Schedule
	loc  *time.Location
}

// parseSchedule checks a schedule and a timezone ("" is UTC). It refuses
// what the library would accept but a cron's fields cannot mean: a
// TZ=/CRON_TZ= prefix (the timezone field says that), @every (an interval
// from the process's start, not a calendar schedule), and an expression
// that never matches a real date (February 30th).
func parseSchedule(expr, tz string) (*schedule, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, apperr.Errorf(apperr.Invalid, "schedule is required: a cron expression such as \"*/5 * * * *\"")
	}
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid schedule %q: give the zone in the timezone field, not in the expression", expr)
	}
	if strings.HasPrefix(expr, "@every") {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid schedule %q: @every is not supported; use a cron expression such as \"*/5 * * * *\"", expr)
	}
	spec, err := parser.Parse(expr)
	if err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid schedule %q: %v (want 5 fields: minute hour day-of-month month day-of-week)", expr, err)
	}
	loc, err := parseTimezone(tz)
	if err != nil {
		return nil, err
	}
	s := &schedule{spec: spec, loc: loc}
	if s.after(time.Now()).IsZero() {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid schedule %q: it never fires", expr)
	}
	return s, nil
}

// parseTimezone loads an IANA zone; "" is UTC. "Local" is refused: it
// would mean each replica's own zone.
func parseTimezone(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if tz == "Local" {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid timezone %q: must be an IANA zone such as \"Europe/Paris\" or \"UTC\"", tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid timezone %q: must be an IANA zone such as \"Europe/Paris\" or \"UTC\"", tz)
	}
	return loc, nil
}

// after is the first tick strictly after t (the zero time if there is
// none within five years, the library's horizon).
func (s *schedule) after(t time.Time) time.Time {
	next := s.spec.Next(t.In(s.loc))
	if next.IsZero() {
		return next
	}
	return next.UTC()
}

// nextRun is the first tick strictly after t, or the zero time (null)
// when that is past end (zero: no end).
func (s *schedule) nextRun(t, end time.Time) time.Time {
	next := s.after(t)
	if !end.IsZero() && next.After(end) {
		return time.Time{}
	}
	return next
}

// timeField is an optional date-time field of a request body: Set tells
// whether it was given, a null leaves Time zero.
type timeField struct {
	Set  bool
	Time time.Time
}

// timeLayouts are what timeField accepts: RFC 3339 (with or without
// fractional seconds), and the same without an offset, read as UTC (what
// Python's datetime.isoformat() gives for a naive datetime).
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999"}

// UnmarshalJSON reads an ISO 8601 date-time or null.
func (f *timeField) UnmarshalJSON(b []byte) error {
	f.Set = true
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		f.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		for _, layout := range timeLayouts {
			if t, err := time.Parse(layout, s); err == nil {
				f.Time = t.UTC()
				return nil
			}
		}
	}
	return &httpx.FieldError{Field: "end_time", Problem: "must be an ISO 8601 date-time such as \"2030-01-01T00:00:00Z\", or null"}
}
