package crons

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/runs"
)

// Handlers serves the cron routes.
type Handlers struct{ svc *Service }

// NewHandlers returns the cron handlers.
func NewHandlers(svc *Service) *Handlers { return &Handlers{svc: svc} }

// CreateRequest is the body of POST /runs/crons and POST
// /threads/{thread_id}/runs/crons: the schedule, and the run-create fields
// of each firing (reference §6.2). Unknown fields are ignored.
type CreateRequest struct {
	// Schedule is a 5-field cron expression (minute hour day-of-month
	// month day-of-week), or @hourly, @daily, @weekly, @monthly, @yearly.
	Schedule string `json:"schedule" validate:"required" example:"*/5 * * * *"`
	// Timezone is the IANA zone the schedule is read in (default UTC).
	Timezone string `json:"timezone"`
	// EndTime: no tick after it fires (default: none).
	EndTime timeField `json:"end_time" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	// Enabled: a disabled cron does not fire (default true).
	Enabled *bool `json:"enabled"`
	// OnRunCompleted: what happens to the new thread of each run of a
	// stateless cron (default delete; ignored on a thread's cron).
	OnRunCompleted string `json:"on_run_completed" enums:"delete,keep"`
	// Metadata is the cron's, and each run's (with cron_id added).
	Metadata map[string]any `json:"metadata"`

	AssistantID       string              `json:"assistant_id" validate:"required" minLength:"1" example:"foo_bar"`
	Input             json.RawMessage     `json:"input" swaggertype:"object"`
	Config            map[string]any      `json:"config"`
	Context           map[string]any      `json:"context"`
	Webhook           *string             `json:"webhook"`
	InterruptBefore   runs.NodeList       `json:"interrupt_before" swaggertype:"array,string"`
	InterruptAfter    runs.NodeList       `json:"interrupt_after" swaggertype:"array,string"`
	MultitaskStrategy string              `json:"multitask_strategy" enums:"reject,enqueue,interrupt,rollback"`
	StreamMode        runs.StreamModeList `json:"stream_mode" swaggertype:"array,string"`
	StreamSubgraphs   bool                `json:"stream_subgraphs"`
	StreamResumable   bool                `json:"stream_resumable"`
	Durability        string              `json:"durability" enums:"sync,async,exit"`
	CheckpointDuring  *bool               `json:"checkpoint_during"`
	// IfNotExists (a thread's cron): create the thread when it does not
	// exist (create), or 404 (reject, the default).
	IfNotExists string `json:"if_not_exists" enums:"create,reject"`
}

func (req *CreateRequest) params(threadID *uuid.UUID) CreateParams {
	var input json.RawMessage
	if len(req.Input) > 0 && string(req.Input) != "null" {
		input = req.Input
	}
	return CreateParams{ThreadID: threadID, AssistantRef: req.AssistantID, Schedule: req.Schedule,
		Timezone: req.Timezone, EndTime: req.EndTime.Time, Enabled: req.Enabled, OnRunCompleted: req.OnRunCompleted,
		Metadata: req.Metadata, Payload: Payload{Input: input, Config: req.Config, Context: req.Context,
			Webhook: req.Webhook, InterruptBefore: runs.StringList(req.InterruptBefore), InterruptAfter: runs.StringList(req.InterruptAfter),
			MultitaskStrategy: req.MultitaskStrategy, StreamMode: runs.StringList(req.StreamMode), StreamSubgraphs: req.StreamSubgraphs,
			StreamResumable: req.StreamResumable, Durability: req.Durability, CheckpointDuring: req.CheckpointDuring,
			IfNotExists: req.IfNotExists}}
}

// CreateStateless godoc
//
//	@Summary		Create a stateless cron
//	@ID				create_cron
//	@Description	Each tick of schedule (in timezone, default UTC) creates a run on a new thread, with the payload's run fields and the cron's metadata plus cron_id. on_run_completed delete (default) deletes that thread after the run, keep keeps it. The body is validated like a run's: an invalid schedule, timezone or run field is a 422, an unknown assistant a 404, and nothing is created. next_run_date is the first tick after now.
//	@Tags			crons
//	@Accept			json
//	@Produce		json
//	@Param			body	body		CreateRequest	true	"Cron"
//	@Success		200		{object}	Cron
//	@Failure		400		{object}	httpx.ErrorBody
//	@Failure		404		{object}	httpx.ErrorBody	"assistant not found"
//	@Failure		422		{object}	httpx.ErrorBody	"invalid schedule, timezone, end_time or run field"
//	@Router			/runs/crons [post]
func (h *Handlers) CreateStateless(w http.ResponseWriter, r *http.Request) error {
	var req CreateRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	c, err := h.svc.Create(r.Context(), req.params(nil))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

// CreateForThread godoc
//
//	@Summary		Create a cron on a thread
//	@ID				create_thread_cron
//	@Description	Each tick of schedule creates a run on the thread, as POST /threads/{thread_id}/runs would (multitask_strategy decides when the thread is busy; a refused run skips that tick). Deleting the thread deletes its crons. 404 when the thread does not exist, unless if_not_exists is create.
//	@Tags			crons
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		CreateRequest	true	"Cron"
//	@Success		200			{object}	Cron
//	@Failure		400			{object}	httpx.ErrorBody
//	@Failure		404			{object}	httpx.ErrorBody	"thread or assistant not found"
//	@Failure		422			{object}	httpx.ErrorBody	"invalid schedule, timezone, end_time or run field"
//	@Router			/threads/{thread_id}/runs/crons [post]
func (h *Handlers) CreateForThread(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	var req CreateRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	c, err := h.svc.Create(r.Context(), req.params(&tid))
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

// Get godoc
//
//	@Summary	Get a cron
//	@ID			get_cron
//	@Tags		crons
//	@Produce	json
//	@Param		cron_id	path		string	true	"Cron ID"	format(uuid)
//	@Success	200		{object}	Cron
//	@Failure	404		{object}	httpx.ErrorBody
//	@Failure	422		{object}	httpx.ErrorBody
//	@Router		/runs/crons/{cron_id} [get]
func (h *Handlers) Get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "cron_id", "cron")
	if err != nil {
		return err
	}
	c, err := h.svc.Get(r.Context(), id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

// PatchRequest is the body of PATCH /runs/crons/{cron_id}; absent (and,
// except for end_time, input and webhook, null) fields stay as they are.
type PatchRequest struct {
	Schedule *string `json:"schedule" example:"0 9 * * 1-5"`
	Timezone *string `json:"timezone"`
	// EndTime: a date-time, or null to remove the end.
	EndTime timeField `json:"end_time" swaggertype:"string" format:"date-time" extensions:"x-nullable"`
	Enabled *bool     `json:"enabled"`
	// OnRunCompleted (stateless crons; ignored on a thread's cron).
	OnRunCompleted *string `json:"on_run_completed" enums:"delete,keep"`
	// Metadata is merged into the cron's (shallowly).
	Metadata map[string]any `json:"metadata"`

	// Input replaces the payload's (null: none).
	Input   json.RawMessage `json:"input" swaggertype:"object"`
	Config  map[string]any  `json:"config"`
	Context map[string]any  `json:"context"`
	// Webhook: a URL, or null / "" to remove it.
	Webhook           json.RawMessage      `json:"webhook" swaggertype:"string" extensions:"x-nullable"`
	InterruptBefore   *runs.NodeList       `json:"interrupt_before" swaggertype:"array,string"`
	InterruptAfter    *runs.NodeList       `json:"interrupt_after" swaggertype:"array,string"`
	MultitaskStrategy *string              `json:"multitask_strategy" enums:"reject,enqueue,interrupt,rollback"`
	StreamMode        *runs.StreamModeList `json:"stream_mode" swaggertype:"array,string"`
	StreamSubgraphs   *bool                `json:"stream_subgraphs"`
	StreamResumable   *bool                `json:"stream_resumable"`
	Durability        *string              `json:"durability" enums:"sync,async,exit"`
}

// Patch godoc
//
//	@Summary		Update a cron
//	@ID				patch_cron
//	@Description	Changes the given fields; metadata is merged, the run fields replace the payload's. The result is validated like a new cron (422 / 404, nothing changed). A new schedule or timezone, enabling a disabled cron, or an end_time that revives an ended cron moves next_run_date to the first tick after now: ticks missed while disabled are not fired.
//	@Tags			crons
//	@Accept			json
//	@Produce		json
//	@Param			cron_id	path		string			true	"Cron ID"	format(uuid)
//	@Param			body	body		PatchRequest	false	"Fields to change"
//	@Success		200		{object}	Cron
//	@Failure		400		{object}	httpx.ErrorBody
//	@Failure		404		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/runs/crons/{cron_id} [patch]
func (h *Handlers) Patch(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "cron_id", "cron")
	if err != nil {
		return err
	}
	var req PatchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	c, err := h.svc.Patch(r.Context(), id, PatchParams{Schedule: req.Schedule, Timezone: req.Timezone,
		EndTime: req.EndTime, Enabled: req.Enabled, OnRunCompleted: req.OnRunCompleted, Metadata: req.Metadata,
		Input: req.Input, Config: req.Config, Context: req.Context, Webhook: req.Webhook,
		InterruptBefore: (*runs.StringList)(req.InterruptBefore), InterruptAfter: (*runs.StringList)(req.InterruptAfter), MultitaskStrategy: req.MultitaskStrategy,
		StreamMode: (*runs.StringList)(req.StreamMode), StreamSubgraphs: req.StreamSubgraphs, StreamResumable: req.StreamResumable,
		Durability: req.Durability})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, c)
	return nil
}

// Delete godoc
//
//	@Summary		Delete a cron
//	@ID				delete_cron
//	@Description	The cron fires no more; runs it created stay.
//	@Tags			crons
//	@Param			cron_id	path	string	true	"Cron ID"	format(uuid)
//	@Success		204
//	@Failure		404	{object}	httpx.ErrorBody
//	@Failure		422	{object}	httpx.ErrorBody
//	@Router			/runs/crons/{cron_id} [delete]
func (h *Handlers) Delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "cron_id", "cron")
	if err != nil {
		return err
	}
	if err := h.svc.Delete(r.Context(), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// SearchRequest is the body of POST /runs/crons/search (and, without the
// paging fields, of POST /runs/crons/count).
type SearchRequest struct {
	// AssistantID is a UUID or a graph name (its system assistant).
	AssistantID string         `json:"assistant_id"`
	ThreadID    string         `json:"thread_id" format:"uuid"`
	Enabled     *bool          `json:"enabled"`
	Metadata    map[string]any `json:"metadata"`
	// Limit: absent or null means 10; values outside 1..1000 are a 422.
	Limit     *int     `json:"limit" default:"10" minimum:"1" maximum:"1000"`
	Offset    int      `json:"offset" default:"0" minimum:"0"`
	SortBy    string   `json:"sort_by" enums:"cron_id,assistant_id,thread_id,next_run_date,end_time,created_at,updated_at"`
	SortOrder string   `json:"sort_order" enums:"asc,desc"`
	Select    []string `json:"select" enums:"cron_id,assistant_id,thread_id,on_run_completed,end_time,schedule,timezone,created_at,updated_at,user_id,payload,next_run_date,metadata,enabled,now"`
}

func (req *SearchRequest) filter() (Filter, error) {
	f := Filter{Enabled: req.Enabled, Metadata: req.Metadata}
	if ref := strings.TrimSpace(req.AssistantID); ref != "" {
		id, err := uuid.Parse(ref)
		if err != nil || len(ref) != 36 {
			id = assistants.SystemID(ref) // a graph name
		}
		f.AssistantID = &id
	}
	if req.ThreadID != "" {
		id, err := httpx.ParseUUID(req.ThreadID, "thread")
		if err != nil {
			return f, err
		}
		f.ThreadID = &id
	}
	return f, nil
}

// selectable are the fields a search may select ("now" is the time the
// crons are scheduled by): the enums of SearchRequest.Select, which the
// OpenAPI document declares.
var selectable = httpx.Enums[SearchRequest]("Select")

// sorts are the orders a search may ask for: the enums of
// SearchRequest.SortBy, which the OpenAPI document declares.
var sorts = httpx.Sort{By: httpx.Enums[SearchRequest]("SortBy"), Default: "created_at"}

// MaxSearchPageBytes caps a page of POST /runs/crons/search: crons are
// added until the encoded page reaches it (a page holds at least one).
const MaxSearchPageBytes = 4 << 20

// params checks req whole (a count too holds its paging fields to the
// bounds search does) and returns the search it asks for.
func (req *SearchRequest) params() (SearchParams, error) {
	if err := httpx.CheckSelect(req.Select, selectable); err != nil {
		return SearchParams{}, err
	}
	f, err := req.filter()
	if err != nil {
		return SearchParams{}, err
	}
	p := SearchParams{Filter: f, Offset: req.Offset}
	if p.Limit, err = httpx.Limit(req.Limit, 10); err != nil {
		return p, err
	}
	if err := httpx.CheckOffset(p.Offset); err != nil {
		return p, err
	}
	p.SortBy, p.SortOrder, err = sorts.Check(req.SortBy, req.SortOrder)
	return p, err
}

// Search godoc
//
//	@Summary		Search crons
//	@ID				search_crons
//	@Description	Filters by assistant_id (a UUID or a graph name), thread_id, enabled and metadata containment; ordered by sort_by (default created_at) and sort_order (default desc), NULLs last. select projects each cron onto the listed fields ("now" adds the time the server schedules by). An absent or null limit means 10; values outside 1..1000 are a 422. Sets X-Pagination-Total and, when more matches follow, X-Pagination-Next.
//	@Tags			crons
//	@Accept			json
//	@Produce		json
//	@Param			body	body		SearchRequest	false	"Filters"
//	@Success		200		{array}		Cron
//	@Header			200		{integer}	X-Pagination-Total	"a lower bound of the match count: offset + page length, plus 1 when more matches follow (then X-Pagination-Next is set). POST /runs/crons/count gives the exact count."
//	@Header			200		{integer}	X-Pagination-Next	"offset of the next page; absent on the last page"
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/runs/crons/search [post]
func (h *Handlers) Search(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p, err := req.params()
	if err != nil {
		return err
	}
	var now time.Time
	if slices.Contains(req.Select, "now") {
		if now, err = h.svc.Now(r.Context()); err != nil {
			return err
		}
	}
	var page httpx.ArrayPage
	n, more, err := h.svc.Search(r.Context(), p, func(c *Cron) (bool, error) {
		var v any = c
		if len(req.Select) > 0 {
			v = c.project(req.Select, now)
		}
		size, err := page.Add(v)
		return size >= MaxSearchPageBytes, err
	})
	if err != nil {
		return err
	}
	httpx.SetPagination(w, p.Offset, n, n, more)
	page.Write(w)
	return nil
}

// Count godoc
//
//	@Summary	Count crons
//	@ID			count_crons
//	@Tags		crons
//	@Accept		json
//	@Produce	json
//	@Param		body	body		SearchRequest	false	"Filters (assistant_id, thread_id, enabled, metadata; limit, offset, sort_by, sort_order and select are checked as by search, then ignored)"
//	@Success	200		{integer}	int
//	@Failure	422		{object}	httpx.ErrorBody
//	@Router		/runs/crons/count [post]
func (h *Handlers) Count(w http.ResponseWriter, r *http.Request) error {
	var req SearchRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	p, err := req.params()
	if err != nil {
		return err
	}
	n, err := h.svc.Count(r.Context(), p.Filter)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, n)
	return nil
}

// project keeps the selected fields of c.
func (c *Cron) project(fields []string, now time.Time) map[string]any {
	all := map[string]any{
		"cron_id": c.CronID, "assistant_id": c.AssistantID, "thread_id": c.ThreadID,
		"on_run_completed": c.OnRunCompleted, "end_time": c.EndTime, "schedule": c.Schedule,
		"timezone": c.Timezone, "created_at": c.CreatedAt, "updated_at": c.UpdatedAt, "user_id": c.UserID,
		"payload": c.Payload, "next_run_date": c.NextRunDate, "metadata": c.Metadata, "enabled": c.Enabled,
		"now": httpx.Time{Time: now},
	}
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		out[f] = all[f]
	}
	return out
}
