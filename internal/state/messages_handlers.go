package state

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/messagelog"
)

// maxChannelName bounds a channel name given in a request.
const maxChannelName = 256

// channelParam reads a channel name (default DefaultLogChannel).
func channelParam(name, value string) (string, error) {
	if value == "" {
		return DefaultLogChannel, nil
	}
	if utf8.RuneCountInString(value) > maxChannelName {
		return "", apperr.Errorf(apperr.Invalid, "Invalid %s: at most %d characters", name, maxChannelName)
	}
	return value, nil
}

// maxSeq bounds a seq given in a query (2^53-1, the largest integer a
// JSON number holds exactly; api/openapi.yaml states it).
const maxSeq = 1<<53 - 1

// querySeq reads query parameter name as a seq (an integer from 1 to
// maxSeq; 0 when absent).
func querySeq(r *http.Request, name string) (int64, error) {
	s, ok := httpx.QueryValue(r, name)
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > maxSeq {
		return 0, apperr.Errorf(apperr.Invalid, "Invalid query parameter %s %q: must be a seq, an integer from 1 to %d", name, s, int64(maxSeq))
	}
	return n, nil
}

// windowQuery reads the window parameters of a state GET: messages_window
// (the opt-in), window_channel and summary. nil when messages_window is
// absent.
func windowQuery(r *http.Request) (*WindowParams, error) {
	q := r.URL.Query()
	if _, ok := httpx.QueryValue(r, "messages_window"); !ok {
		sum, err := httpx.QueryBool(r, "summary", false)
		if err != nil {
			return nil, err
		}
		if err := windowless(q.Get("window_channel"), sum); err != nil {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid query: %v", err)
		}
		return nil, nil
	}
	k, err := httpx.QueryInt(r, "messages_window", 0, 1, MaxLogPage)
	if err != nil {
		return nil, err
	}
	ch, err := channelParam("window_channel", q.Get("window_channel"))
	if err != nil {
		return nil, err
	}
	sum, err := httpx.QueryBool(r, "summary", false)
	if err != nil {
		return nil, err
	}
	return &WindowParams{Channel: ch, K: k, Summary: sum}, nil
}

// windowless checks the window fields of a read without messages_window.
// Their defaults (window_channel messages, summary false), which the API's
// schema declares and a client generated from it sends, ask for nothing
// and are accepted; another channel, or summary true, asks for a window
// that only messages_window opens, and is refused.
func windowless(channel string, summary bool) error {
	if summary || (channel != "" && channel != DefaultLogChannel) {
		return errors.New("summary=true and a window_channel other than " + DefaultLogChannel + " need messages_window")
	}
	return nil
}

// windowBody checks the window fields of POST /state/checkpoint.
func windowBody(req *StateCheckpointRequest) (*WindowParams, error) {
	if req.MessagesWindow == nil {
		if err := windowless(req.WindowChannel, req.Summary); err != nil {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid request body: %v", err)
		}
		return nil, nil
	}
	if k := *req.MessagesWindow; k < 1 || k > MaxLogPage {
		return nil, apperr.Errorf(apperr.Invalid, "Invalid messages_window %d: must be between 1 and %d", k, MaxLogPage)
	}
	ch, err := channelParam("window_channel", req.WindowChannel)
	if err != nil {
		return nil, err
	}
	return &WindowParams{Channel: ch, K: *req.MessagesWindow, Summary: req.Summary}, nil
}

// GetMessages godoc
//
//	@Summary		Page a thread's message log
//	@ID				get_thread_messages
//	@Description	The elements of a list channel (default messages) at a checkpoint (default: the thread's latest root checkpoint, the current branch), newest first, each with its seq and the run and step that produced it. Continue with before = next_before. A list of 1 KB or more is stored per element and a page reads only its elements; its seqs are the thread's element-log seqs (stable across steps and branches). A shorter list's seqs are its 1-based positions, with run_id and step null. A before seq the list does not hold (a message removed meanwhile) is a 400: start again from the newest. A thread without checkpoints gives an empty page.
//	@Tags			state
//	@Produce		json
//	@Param			thread_id		path		string	true	"Thread ID"	format(uuid)
//	@Param			channel			query		string	false	"List channel"	default(messages)	maxlength(256)
//	@Param			checkpoint_id	query		string	false	"Checkpoint to read (default: the latest)"
//	@Param			before			query		int		false	"Only elements positioned before the element with this seq"	minimum(1)	maximum(9007199254740991)
//	@Param			limit			query		int		false	"Page size"	default(50)	minimum(1)	maximum(1000)
//	@Success		200				{object}	MessagePage
//	@Failure		400				{object}	httpx.ErrorBody	"before not in the list; the channel is not a list"
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/messages [get]
func (h *Handlers) GetMessages(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	p := MessagesParams{CheckpointID: r.URL.Query().Get("checkpoint_id")}
	if err := checkID(p.CheckpointID); err != nil {
		return err
	}
	if p.Channel, err = channelParam("channel", r.URL.Query().Get("channel")); err != nil {
		return err
	}
	if p.Before, err = querySeq(r, "before"); err != nil {
		return err
	}
	if p.Limit, err = httpx.QueryInt(r, "limit", 50, 1, MaxLogPage); err != nil {
		return err
	}
	page, err := h.svc.Messages(r.Context(), id, p)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, page)
	return nil
}

// SummaryRequest is the body of POST /threads/{id}/summaries.
type SummaryRequest struct {
	// Channel is the list channel summarized (default messages).
	Channel string `json:"channel" default:"messages"`
	// FromSeq and ToSeq are the inclusive seq range summarized.
	FromSeq *int64 `json:"from_seq" validate:"required" minimum:"1"`
	ToSeq   *int64 `json:"to_seq" validate:"required" minimum:"1"`
	// Summary is any JSON value but null (text, or an object with topics,
	// decisions, ...).
	Summary json.RawMessage `json:"summary" swaggertype:"object" validate:"required"`
}

// AddSummary godoc
//
//	@Summary		Store a summary of a range of a thread's message log
//	@ID				add_thread_summary
//	@Description	A record summarizing the elements with seqs from_seq..to_seq (inclusive) of a list channel (default messages); it never changes the thread's state. The range must lie within the seqs the thread has (400 otherwise); one summary per range (409 for a second). Stored while a run is active too (a graph's node may summarize). Windowed state reads return the widest summary that ends before the window.
//	@Tags			state
//	@Accept			json
//	@Produce		json
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		SummaryRequest	true	"Summary"
//	@Success		200			{object}	SummaryRecord
//	@Failure		400			{object}	httpx.ErrorBody	"bad range"
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		409			{object}	httpx.ErrorBody	"a summary of this range exists"
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/summaries [post]
func (h *Handlers) AddSummary(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	var req SummaryRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.FromSeq == nil || req.ToSeq == nil {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: fields \"from_seq\" and \"to_seq\" are required")
	}
	if len(req.Summary) == 0 || string(req.Summary) == "null" {
		return apperr.Errorf(apperr.Invalid, "Invalid request body: field \"summary\" is required (any JSON value but null)")
	}
	ch, err := channelParam("channel", req.Channel)
	if err != nil {
		return err
	}
	rec, err := h.svc.AddSummary(r.Context(), id, SummaryParams{Channel: ch, FromSeq: *req.FromSeq, ToSeq: *req.ToSeq, Summary: req.Summary})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, rec)
	return nil
}

// ListSummaries godoc
//
//	@Summary		List a thread's summaries, widest first
//	@ID				list_thread_summaries
//	@Description	Widest first: the greater span (to_seq - from_seq), then the later end, then the newer record; the first is the one a window would show.
//	@Tags			state
//	@Produce		json
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Param			channel		query		string	false	"Only this channel's summaries (default: every channel)"	maxlength(256)
//	@Param			covering	query		int		false	"Only summaries whose range holds this seq"	minimum(1)	maximum(9007199254740991)
//	@Param			before		query		int		false	"Only summaries that end before this seq"	minimum(1)	maximum(9007199254740991)
//	@Param			limit		query		int		false	"At most this many"	default(50)	minimum(1)	maximum(1000)
//	@Success		200			{array}		SummaryRecord
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/summaries [get]
func (h *Handlers) ListSummaries(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	f := messagelog.SummaryFilter{Channel: r.URL.Query().Get("channel")}
	if utf8.RuneCountInString(f.Channel) > maxChannelName {
		return apperr.Errorf(apperr.Invalid, "Invalid channel: at most %d characters", maxChannelName)
	}
	if f.Covering, err = querySeq(r, "covering"); err != nil {
		return err
	}
	if f.Before, err = querySeq(r, "before"); err != nil {
		return err
	}
	if f.Limit, err = httpx.QueryInt(r, "limit", 50, 1, MaxLogPage); err != nil {
		return err
	}
	list, err := h.svc.Summaries(r.Context(), id, f)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, list)
	return nil
}

// DeleteSummary godoc
//
//	@Summary	Delete a summary
//	@ID			delete_thread_summary
//	@Tags		state
//	@Param		thread_id	path	string	true	"Thread ID"	format(uuid)
//	@Param		summary_id	path	int		true	"Summary ID"	minimum(1)
//	@Success	204
//	@Failure	404	{object}	httpx.ErrorBody
//	@Failure	422	{object}	httpx.ErrorBody
//	@Router		/threads/{thread_id}/summaries/{summary_id} [delete]
func (h *Handlers) DeleteSummary(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	sid, err := strconv.ParseInt(chi.URLParam(r, "summary_id"), 10, 64)
	if err != nil || sid < 1 || sid == math.MaxInt64 {
		return apperr.Errorf(apperr.Invalid, "Invalid summary ID: must be a positive integer, got %q", chi.URLParam(r, "summary_id"))
	}
	if err := h.svc.DeleteSummary(r.Context(), id, sid); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
