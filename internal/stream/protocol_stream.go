package stream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/postgres"
)

// ProtocolStreamRequest is the body of POST /threads/{thread_id}/stream/events.
type ProtocolStreamRequest struct {
	// Channels to send: values, updates, messages, tools, lifecycle, input,
	// tasks, custom, checkpoints, or custom:<name>.
	Channels []string `json:"channels" validate:"required,min=1"`
	// Namespaces are prefixes of the namespaces to send (none: all).
	Namespaces [][]string `json:"namespaces"`
	// Depth is how many levels below a prefix to send (none: any).
	Depth *int64 `json:"depth" minimum:"0" maximum:"1048576"`
	// Since resumes after this seq (Last-Event-ID wins when both are given).
	Since *int64 `json:"since" minimum:"0"`
}

// filter validates the request.
func (req *ProtocolStreamRequest) filter() (*protocolFilter, error) {
	if len(req.Channels) == 0 {
		return nil, apperr.Errorf(apperr.Invalid, "channels must name at least one channel")
	}
	f := &protocolFilter{channels: map[string]bool{}, namespaces: req.Namespaces, depth: -1}
	for _, c := range req.Channels {
		name, ok := strings.CutPrefix(c, "custom:")
		if !slices.Contains(protocolChannels, c) && (!ok || name == "") {
			return nil, apperr.Errorf(apperr.Invalid, "Invalid channel %q: must be one of %s or custom:<name>",
				c, strings.Join(protocolChannels, ", "))
		}
		f.channels[c] = true
	}
	for _, ns := range req.Namespaces {
		if ns == nil {
			return nil, apperr.Errorf(apperr.Invalid, "namespaces must be a list of lists of strings")
		}
	}
	if req.Depth != nil {
		if *req.Depth < 0 || *req.Depth > 1<<20 {
			return nil, apperr.Errorf(apperr.Invalid, "depth must be a non-negative integer")
		}
		f.depth = int(*req.Depth)
	}
	if req.Since != nil && *req.Since < 0 {
		return nil, apperr.Errorf(apperr.Invalid, "since must be a non-negative integer")
	}
	return f, nil
}

// protocolStart returns the seq a protocol stream of the thread sends
// events after when the client names none: just before the first event of
// the thread's latest run (so a client that starts a run and then opens
// its stream sees all of it), or after the thread's last event when that
// run has written none yet. A missing thread is an apperr.NotFound.
func (s *Service) protocolStart(r *http.Request, threadID uuid.UUID) (int64, error) {
	return s.protocolStartOf(r.Context(), threadID)
}

// protocolStartOf is protocolStart for a request's context.
func (s *Service) protocolStartOf(ctx context.Context, threadID uuid.UUID) (int64, error) {
	var after *int64
	err := s.db.QueryRow(ctx, `SELECT coalesce(
			(SELECT e.thread_seq - 1 FROM run_events e WHERE e.run_id = t.latest_run_id ORDER BY e.seq LIMIT 1),
			(SELECT max(e.thread_seq) FROM run_events e WHERE e.thread_id = t.thread_id))
		FROM threads t WHERE t.thread_id = $1 AND t.tenant_id = $2`, threadID, auth.Tenant(ctx)).Scan(&after)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", threadID)
	}
	if err != nil || after == nil {
		return 0, err
	}
	return *after*protocolSeqScale + protocolSeqScale - 1, nil
}

// ProtocolEvents godoc
//
//	@Summary		Stream a thread's events (protocol v2)
//	@ID				protocol_thread_events
//	@Description	The thread-centric stream of client.threads.stream() (SDK 1.x): Server-Sent Events of every run of the thread, in order, until the client leaves or the server shuts down. Each frame is "event: <method>", "id: <seq>" and data {"type":"event","event_id","seq","method","params":{"namespace","timestamp","data","node"?}}; methods lifecycle (running, then completed, interrupted or failed per run), values, updates (node in params), messages (message-start, content-block-start/-delta/-finish, message-finish, derived from the run's message chunks), input.requested (one per interrupt: interrupt_id, payload), tasks, checkpoints, custom ({payload}). seq grows along the thread and is stable: since (or Last-Event-ID) resumes after one without loss or repeats; without either the stream starts at the first event of the thread's latest run. A thread that does not exist yet (a stream opened before the run.start that creates it) is waited for: its events are sent from the first. A comment line is sent every 5 s while idle.
//	@Tags			threads
//	@Accept			json
//	@Produce		text/event-stream
//	@Param			thread_id		path		string					true	"Thread ID"	format(uuid)
//	@Param			Last-Event-ID	header		string					false	"Resume after this seq"
//	@Param			body			body		ProtocolStreamRequest	true	"Filter"
//	@Success		200				{string}	string					"text/event-stream"
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/stream/events [post]
func (h *Handlers) ProtocolEvents(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	var req ProtocolStreamRequest
	if err := httpx.DecodeJSON(r, &req); err != nil {
		return err
	}
	f, err := req.filter()
	if err != nil {
		return err
	}
	since := int64(-1)
	if v := strings.TrimSpace(r.Header.Get("Last-Event-ID")); v != "" {
		if since, err = strconv.ParseInt(v, 10, 64); err != nil || since < 0 {
			return apperr.Errorf(apperr.Invalid, "Invalid Last-Event-ID %q: must be a seq this stream sent", v)
		}
	} else if req.Since != nil {
		since = *req.Since
	}
	start, err := h.svc.protocolStart(r, tid)
	switch {
	case apperr.CodeOf(err) == apperr.NotFound:
		// A stream opened before the run.start that creates the thread
		// (the SDK opens it first): it waits, and sends the thread's
		// events from its first, as LangGraph's server does. The log is
		// read for the caller's tenant only.
		start = -1
	case err != nil:
		return err
	}
	if since < 0 {
		since = start
	}
	return h.protocolStream(w, r, tid, since, f)
}

// protocolStream sends the thread's protocol events with a seq above
// since that pass f as Server-Sent Events, live, until the client leaves
// or the server drains.
func (h *Handlers) protocolStream(w http.ResponseWriter, r *http.Request, tid uuid.UUID, since int64, f *protocolFilter) error {
	ctx := r.Context()
	out := h.svc.startSSE(w)
	defer out.close()
	err := h.protocolPump(ctx, tid, since, f, nil, func(pe *protocolEvent) error {
		data, _ := json.Marshal(pe)
		return out.sendID(pe.Method, data, pe.EventID)
	}, func() error { return out.write([]byte(": heartbeat\n\n")) })
	if err == nil || errors.Is(err, errClientGone) {
		return nil
	}
	if ctx.Err() == nil {
		_ = out.send("error", h.protocolErrorFrame(err), -1)
	}
	return nil
}

// protocolPump is the one reader of protocol events behind both transports
// (SSE and WebSocket): it hands send the thread's protocol events with a
// seq above since that pass f, in order, live, and calls beat every
// StreamHeartbeat while idle. With ready, the events already in the log
// are gathered first and ready is called with their number before they
// are sent (a WebSocket subscription's replayed_events). It returns nil
// when the server drains or ctx ends, errClientGone when send or beat
// fails, and the error that stopped it otherwise.
func (h *Handlers) protocolPump(ctx context.Context, tid uuid.UUID, since int64, f *protocolFilter,
	ready func(replayed int) error, send func(*protocolEvent) error, beat func() error) error {
	sub := h.svc.events.Subscribe(tid)
	defer h.svc.events.Unsubscribe(tid, sub)
	beats := time.NewTicker(h.svc.cfg.StreamHeartbeat)
	defer beats.Stop()
	poll := time.NewTicker(max(h.svc.cfg.PollInterval, h.svc.cfg.StreamHeartbeat))
	defer poll.Stop()
	tr := newProtocolTranslator(h.svc)
	var replay []protocolEvent
	replaying := ready != nil
	// The log row holding seq since+1 may hold earlier seqs too: read it
	// again and send only what is past since.
	cursor := (since+1)/protocolSeqScale - 1
	for {
		evs, err := h.svc.protocolLogAfter(ctx, tid, cursor, streamBatch)
		if err == nil {
			for _, e := range evs {
				pevs, terr := tr.translate(ctx, e)
				if terr != nil {
					err = terr
					break
				}
				cursor = e.ThreadSeq
				for i := range pevs {
					switch {
					case pevs[i].Seq <= since || !f.match(&pevs[i]):
					case replaying:
						replay = append(replay, pevs[i])
					case send(&pevs[i]) != nil:
						return errClientGone
					}
				}
			}
		}
		if err != nil {
			if !postgres.IsUnavailable(err) || ctx.Err() != nil {
				return err
			}
			// The database is away: heartbeats go on; read again when it
			// is back (the listener's reconnect wakes every stream) or at
			// the poll.
		} else if len(evs) == streamBatch {
			continue
		} else if replaying {
			replaying = false
			if ready(len(replay)) != nil {
				return errClientGone
			}
			for i := range replay {
				if send(&replay[i]) != nil {
					return errClientGone
				}
			}
			replay = nil
		}
		if _, ok := h.idleWith(ctx, beat, sub, beats, poll); !ok {
			return nil
		}
	}
}

// protocolErrorFrame is the frame that ends a protocol stream on err: an
// error frame with id null (not the answer to a command), which the SDK
// reports to onError.
func (h *Handlers) protocolErrorFrame(err error) []byte {
	code, msg := "unknown_error", "streaming failed"
	var ae *apperr.Error
	if errors.As(err, &ae) {
		msg = ae.Message
		if ae.Code == apperr.NotFound {
			code = "no_such_run"
		}
	} else {
		h.svc.log.Error("protocol stream", "error", err)
	}
	return jsonv.Must(map[string]any{"type": "error", "id": nil, "error": code, "message": msg})
}
