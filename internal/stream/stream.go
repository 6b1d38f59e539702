package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/crypt"
	"github.com/weftdev/weft/internal/eventlog"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/metrics"
	"github.com/weftdev/weft/internal/postgres"
	"github.com/weftdev/weft/internal/runs"
)

// StoredEvent is one entry of a run's event log. Ref is set when Data is
// not the whole event but its rest, the values coming from a checkpoint
// (see package eventlog); the stream renders it before sending it.
type StoredEvent struct {
	Seq   int64           `db:"seq"`
	Event string          `db:"event"`
	Data  json.RawMessage `db:"data"`
	Ref   []byte          `db:"ref"`
}

// EventsAfter returns up to limit events of the run with a sequence number
// above after, in order, as stored (see render).
func (s *Service) EventsAfter(ctx context.Context, runID uuid.UUID, after int64, limit int) ([]StoredEvent, error) {
	rows, err := s.db.Query(ctx, `SELECT seq, event, data, ref FROM run_events WHERE run_id = $1 AND seq > $2
		AND EXISTS (SELECT 1 FROM runs WHERE run_id = $1 AND tenant_id = $4)
		ORDER BY seq LIMIT $3`, runID, after, limit, auth.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByName[StoredEvent])
	if err != nil {
		return nil, err
	}
	kr := crypt.FromContext(ctx)
	for i := range evs {
		if err := openData(kr, &evs[i].Data, runID, evs[i].Seq); err != nil {
			return nil, err
		}
	}
	return evs, nil
}

// openData decrypts a stored event's data in place (encryption at rest;
// plaintext rows pass through).
func openData(kr *crypt.Keyring, data *json.RawMessage, runID uuid.UUID, seq int64) error {
	opened, err := kr.OpenJSON(*data)
	if err != nil {
		return fmt.Errorf("run %s event %d: %w", runID, seq, err)
	}
	*data = opened
	return nil
}

// renderRun renders the events of run (of thread threadID) that are
// stored as references and that send selects: one batch.
func (s *Service) renderRun(ctx context.Context, threadID, runID uuid.UUID, evs []StoredEvent, send func(StoredEvent) bool) error {
	var items []eventlog.Item
	for i := range evs {
		if e := &evs[i]; e.Ref != nil && send(*e) {
			items = append(items, eventlog.Item{RunID: runID, Seq: e.Seq, Data: &e.Data, Ref: &e.Ref})
		}
	}
	return s.render.Render(ctx, s.db, threadID, items)
}

// position is where a run stream is in the run's log: after is the
// sequence number of the last stored event read, next the id the next
// event sent gets. An event's id is its index among the run's events the
// stream's modes send (metadata first, id 0), as LangGraph's servers
// number the events of a run's stream; the log's sequence numbers also
// count the events of other modes, recorded for other readers.
type position struct {
	after int64
	next  int64
}

// positionAt returns the position of a stream of modes m on run: with
// lastID < 0 after the run's newest event (a join from now on), else just
// after the event the stream sent as lastID (a resume). An id beyond the
// events so far positions after the newest event, numbering on from there:
// the stream then sends only events whose id is above lastID. Only the
// events' names are read, not their data.
func (s *Service) positionAt(ctx context.Context, runID uuid.UUID, m modes, lastID int64) (position, error) {
	rows, err := s.db.Query(ctx, `SELECT seq, event FROM run_events WHERE run_id = $1
		AND EXISTS (SELECT 1 FROM runs WHERE run_id = $1 AND tenant_id = $2) ORDER BY seq`, runID, auth.Tenant(ctx))
	if err != nil {
		return position{}, err
	}
	defer rows.Close()
	var p position
	for rows.Next() {
		var e StoredEvent
		if err := rows.Scan(&e.Seq, &e.Event); err != nil {
			return position{}, err
		}
		if e.Event == "end" {
			break // left for the stream to read: it closes there
		}
		if m.wire(e) != "" {
			if lastID >= 0 && p.next > lastID {
				return p, nil
			}
			p.next++
		}
		p.after = e.Seq
	}
	return p, rows.Err()
}

// modes is the set of stream modes a client asked for.
type modes map[string]bool

func parseModes(list []string) modes {
	m := modes{}
	for _, s := range list {
		for _, part := range strings.Split(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				m[part] = true
			}
		}
	}
	if len(m) == 0 {
		m["values"] = true
	}
	return m
}

// CheckpointEnvelope is the stored event of a LangGraph.js checkpoint's
// envelope ({id, parent_id, step, source}), which LangGraph.js streams
// before each values chunk of a run streaming subgraphs and its server
// sends as a "checkpoints" event whatever modes were asked for (the JS
// worker records it only then).
const CheckpointEnvelope = "checkpoint_envelope"

// wire returns the SSE event name a stored event goes out under for these
// modes ("" to skip it): metadata and error always; values, updates,
// custom, checkpoints, tasks and debug when asked for; message tuples under "messages" for
// messages-tuple; messages/partial, /complete and /metadata for messages;
// LangChain's callback events under "events" for events; end never (the
// stream closes). An interrupt reaches a values stream once, in the values
// event that carries it (the run's last), never also as its updates event.
func (m modes) wire(e StoredEvent) string {
	if base, ns, sub := strings.Cut(e.Event, "|"); sub {
		// A subgraph's event ("values|<namespace>", from stream_subgraphs):
		// sent under its own name when its mode was asked for.
		if name := m.wire(StoredEvent{Event: base, Data: e.Data}); name != "" &&
			(name == base || base == "messages" || base == CheckpointEnvelope) {
			return name + "|" + ns
		}
		return ""
	}
	switch e.Event {
	case "metadata", "error":
		return e.Event
	case CheckpointEnvelope:
		return "checkpoints"
	case "values", "custom", "checkpoints", "tasks", "debug", "tools":
		if m[e.Event] {
			return e.Event
		}
	case "updates":
		if m["updates"] {
			return "updates"
		}
	case "messages":
		if m["messages-tuple"] {
			return "messages"
		}
	case "messages/partial", "messages/complete", "messages/metadata":
		if m["messages"] {
			return e.Event
		}
	case "events":
		if m["events"] {
			return "events"
		}
	}
	return ""
}

// numbering is the modes whose events a join stream of modes m numbers:
// the run's own modes and m. A join narrowed to some of the run's modes
// thus sends each event with the id the run's stream gave it (a client
// resumes either with the other's ids); a join that adds modes numbers the
// added events too, the same way on every join with those modes.
func numbering(run, m modes) modes {
	out := modes{}
	for k := range run {
		out[k] = true
	}
	for k := range m {
		out[k] = true
	}
	return out
}

// parseLastEventID reads a Last-Event-ID: an event id this server sent (an
// event's index in the run's stream), -1 for "from the first event", or
// the "<ms>-<n>" form of LangGraph's Python server (lastEventID; the
// pattern api/openapi.yaml states). The header wins; without it the
// last_event_id query parameter is read (a browser's EventSource cannot set
// the header on its first request, only on its reconnects); either is
// checked when given. ok is false when neither is given; after is -1 for
// "from the first event".
func parseLastEventID(r *http.Request) (after int64, ok bool, err error) {
	header, inHeader := r.Header.Get("Last-Event-ID"), len(r.Header.Values("Last-Event-ID")) > 0
	query, inQuery := httpx.QueryValue(r, "last_event_id")
	for _, v := range []struct {
		given bool
		s     string
	}{{inHeader, header}, {inQuery, query}} {
		if v.given && !lastEventID.MatchString(v.s) {
			return 0, false, apperr.Errorf(apperr.Invalid, "Invalid Last-Event-ID %q: must be an event id or -1", v.s)
		}
	}
	v := query
	if inHeader {
		v = header
	} else if !inQuery {
		return 0, false, nil
	}
	if _, seq, found := strings.Cut(v, "-"); found && v != "-1" {
		v = seq
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n, true, nil
}

// lastEventID is the form of a Last-Event-ID.
var lastEventID = regexp.MustCompile(`^(-1|[0-9]{1,18}|[0-9]{1,18}-[0-9]{1,18})$`)

// sse writes Server-Sent Events and flushes each one.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	m  *metrics.Metrics
}

// startSSE starts a stream, counted open until close.
func (svc *Service) startSSE(w http.ResponseWriter) *sse {
	svc.cfg.Metrics.StreamOpened()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	// private, no-cache (LangGraph's servers send no-cache): with no-store,
	// Chromium reports a fetch whose body a page reads to its end as failed
	// (net::ERR_ABORTED).
	h.Set("Cache-Control", "private, no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w), m: svc.cfg.Metrics}
	_ = s.rc.Flush()
	return s
}

// close counts the stream closed.
func (s *sse) close() { s.m.StreamClosed() }

// send writes one event (id < 0: no id line). A client that does not take
// it within a minute is disconnected (it resumes with Last-Event-ID).
func (s *sse) send(event string, data []byte, id int64) error {
	sid := ""
	if id >= 0 {
		sid = strconv.FormatInt(id, 10)
	}
	return s.sendID(event, data, sid)
}

// sendID is send with an id of any form ("": no id line).
func (s *sse) sendID(event string, data []byte, id string) error {
	var b bytes.Buffer
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteString("\ndata: ")
	if err := json.Compact(&b, data); err != nil {
		b.Write(data)
	}
	if id != "" {
		b.WriteString("\nid: ")
		b.WriteString(id)
	}
	b.WriteString("\n\n")
	if err := s.write(b.Bytes()); err != nil {
		return err
	}
	s.m.EventSent()
	return nil
}

func (s *sse) write(p []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(time.Minute))
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

// streamRun sends run's events of modes m from position p on, live until
// the run ends, then closes; ids number the events of modes num (a superset
// of m: see numbering); events with an id up to skip are not sent (a
// resume). Events come from the durable log (so any server
// process can serve any run, and a reconnect with Last-Event-ID loses
// nothing); a notification on each commit wakes the stream, with a poll as
// fallback.
func (h *Handlers) streamRun(w http.ResponseWriter, r *http.Request, run *runs.Run, p position, skip int64, m, num modes) error {
	ctx := r.Context()
	after := p.after
	sub := h.svc.events.Subscribe(run.RunID)
	defer h.svc.events.Unsubscribe(run.RunID, sub)
	out := h.svc.startSSE(w)
	defer out.close()
	beat := time.NewTicker(h.svc.cfg.StreamHeartbeat)
	defer beat.Stop()
	// Notifications wake the stream; the poll is only a safety net for a
	// missed one, so it runs at the heartbeat's pace.
	poll := time.NewTicker(max(h.svc.cfg.PollInterval, h.svc.cfg.StreamHeartbeat))
	defer poll.Stop()
	woken := false
	for {
		evs, err := h.svc.EventsAfter(ctx, run.RunID, after, streamBatch)
		if err != nil {
			if !postgres.IsUnavailable(err) || ctx.Err() != nil {
				return h.streamError(out, ctx, err)
			}
			// The database is away: keep the stream open (heartbeats go
			// on) and read again at the next notification (the listener's
			// reconnect wakes every stream) or poll.
			if _, ok := h.idle(ctx, out, sub, beat, poll); !ok {
				return h.gone()
			}
			continue
		}
		if err := h.svc.renderRun(ctx, run.ThreadID, run.RunID, evs, func(e StoredEvent) bool { return m.wire(e) != "" }); err != nil {
			return h.streamError(out, ctx, err)
		}
		for _, e := range evs {
			after = e.Seq
			if e.Event == "end" {
				return nil
			}
			if num.wire(e) == "" {
				continue
			}
			id := p.next
			p.next++
			if name := m.wire(e); name != "" && id > skip {
				if err := out.send(name, e.Data, id); err != nil {
					return errClientGone
				}
			}
		}
		if len(evs) == streamBatch {
			continue
		}
		if len(evs) == 0 && woken {
			// Nothing new, yet something happened: a run can end without an
			// "end" event (cancelled while queued, dead-lettered, rolled
			// back), so look at it.
			cur, err := h.svc.runs.Get(ctx, run.ThreadID, run.RunID)
			if apperr.CodeOf(err) == apperr.NotFound {
				return h.streamError(out, ctx, err)
			}
			if err == nil && cur.Finished() {
				if rest, err := h.svc.EventsAfter(ctx, run.RunID, after, 1); err == nil && len(rest) == 0 {
					return nil
				}
			}
		}
		var ok bool
		if woken, ok = h.idle(ctx, out, sub, beat, poll); !ok {
			return h.gone()
		}
	}
}

// streamError ends a stream with an in-band error event.
func (h *Handlers) streamError(out *sse, ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	class, msg := "InternalError", "streaming failed"
	var ae *apperr.Error
	if errors.As(err, &ae) {
		class, msg = "HTTPException", ae.Message
	} else {
		h.svc.log.Error("stream", "error", err)
	}
	_ = out.send("error", jsonv.Must(map[string]any{"error": class, "message": msg}), -1)
	return nil
}

func streamModes(k runs.Kwargs) modes { return parseModes(k.StreamMode) }

// createAndStream creates a run and streams it from its first event.
func (h *Handlers) createAndStream(w http.ResponseWriter, r *http.Request, threadID uuid.UUID) error {
	run, err := h.svc.runs.CreateFromRequest(r, threadID)
	if err != nil {
		return err
	}
	p := runs.Path(run.ThreadID, run.RunID, run.Temporary)
	w.Header().Set("Content-Location", p)
	w.Header().Set("Location", p+"/stream")
	var k runs.Kwargs
	_ = jsonv.Decode(run.Kwargs, &k)
	done := h.svc.runs.CancelOnDisconnect(r.Context(), run, k.OnDisconnect == "cancel")
	m := streamModes(k)
	err = h.streamRun(w, r, run, position{}, -1, m, m)
	done(errors.Is(err, errClientGone))
	if run.Temporary {
		h.svc.runs.DeleteTemporaryLater(r.Context(), run)
	}
	return ignoreGone(err)
}

// errClientGone ends a stream whose client went away (a failed write, or
// its request's context done), as opposed to one that ended with its run
// or with the server's shutdown.
var errClientGone = errors.New("stream: the client went away")

// ignoreGone is a stream handler's result: a client that went away is not
// an error to report.
func ignoreGone(err error) error {
	if errors.Is(err, errClientGone) {
		return nil
	}
	return err
}

// gone is why an idle stream stopped: its client went away, unless the
// server is shutting down.
func (h *Handlers) gone() error {
	select {
	case <-h.svc.draining:
		return nil
	default:
		return errClientGone
	}
}

// StreamStateful godoc
//
//	@Summary		Create a run and stream it
//	@ID				stream_run
//	@Description	Creates a run like POST /threads/{thread_id}/runs and answers with Server-Sent Events: metadata first, then the events of the requested stream_mode (values, updates, messages-tuple as "messages", custom; other modes are accepted and send nothing yet), errors in-band as an error event; the stream closes when the run ends. Every event has an id, its index in the run's stream (metadata is 0; the ids follow the run's durable log, so they are the same on every read): GET the Location URL with Last-Event-ID to resume. A comment line is sent every 5 s while idle. Creation errors are plain JSON 4xx.
//	@Tags			runs
//	@Accept			json
//	@Produce		text/event-stream
//	@Param			thread_id	path		string			true	"Thread ID"	format(uuid)
//	@Param			body		body		runs.CreateRequest	true	"Run"
//	@Success		200			{string}	string			"text/event-stream"
//	@Failure		400			{object}	httpx.ErrorBody
//	@Failure		404			{object}	httpx.ErrorBody
//	@Failure		409			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/runs/stream [post]
func (h *Handlers) StreamStateful(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	return h.createAndStream(w, r, tid)
}

// StreamStateless godoc
//
//	@Summary		Create a stateless run and stream it
//	@ID				stream_run_stateless
//	@Description	As POST /threads/{thread_id}/runs/stream, on a temporary thread.
//	@Tags			runs
//	@Accept			json
//	@Produce		text/event-stream
//	@Param			body	body		runs.CreateRequest	true	"Run"
//	@Success		200		{string}	string			"text/event-stream"
//	@Failure		400		{object}	httpx.ErrorBody
//	@Failure		404		{object}	httpx.ErrorBody
//	@Failure		422		{object}	httpx.ErrorBody
//	@Router			/runs/stream [post]
func (h *Handlers) StreamStateless(w http.ResponseWriter, r *http.Request) error {
	return h.createAndStream(w, r, uuid.Nil)
}

// joinStream streams an existing run: without Last-Event-ID from now on,
// with it the stored events after that id first.
func (h *Handlers) joinStream(w http.ResponseWriter, r *http.Request, threadID, runID uuid.UUID) error {
	after, resume, err := parseLastEventID(r)
	if err != nil {
		return err
	}
	cancelOnDisc, err := httpx.QueryBool(r, "cancel_on_disconnect", false)
	if err != nil {
		return err
	}
	run, err := h.svc.runs.Get(r.Context(), threadID, runID)
	if err != nil {
		return err
	}
	var k runs.Kwargs
	_ = jsonv.Decode(run.Kwargs, &k)
	m := streamModes(k)
	num := m
	if q := r.URL.Query()["stream_mode"]; len(q) > 0 {
		m = parseModes(httpx.QueryList(q))
		num = numbering(num, m)
	}
	skip := int64(-1)
	if resume {
		skip = after
	}
	var pos position
	if !resume || after >= 0 {
		if pos, err = h.svc.positionAt(r.Context(), runID, num, skip); err != nil {
			return err
		}
	}
	p := runs.Path(run.ThreadID, run.RunID, threadID == uuid.Nil)
	w.Header().Set("Content-Location", p)
	w.Header().Set("Location", p+"/stream")
	done := h.svc.runs.CancelOnDisconnect(r.Context(), run, cancelOnDisc)
	err = h.streamRun(w, r, run, pos, skip, m, num)
	done(errors.Is(err, errClientGone))
	return ignoreGone(err)
}

// JoinStream godoc
//
//	@Summary		Join a run's stream
//	@ID				stream_run_http
//	@Description	Server-Sent Events of a run. With Last-Event-ID (an id this stream sent, or -1 for the first event) the stored events after it are sent first, then live ones; without it, only events from now on. A run that has ended is replayed and the stream closes. stream_mode narrows the modes (default: the run's own). A thread or run that is not there (or not the caller's) is no 404: the stream opens and sends one error event whose message starts "404: ", as the official servers do.
//	@Tags			runs
//	@Produce		text/event-stream
//	@Param			thread_id				path		string	true	"Thread ID"	format(uuid)
//	@Param			run_id					path		string	true	"Run ID"	format(uuid)
//	@Param			Last-Event-ID			header		string	false	"Resume after this event id (-1: from the start)"
//	@Param			last_event_id			query		string	false	"Last-Event-ID for clients that cannot send the header (EventSource's first request); the header wins"
//	@Param			stream_mode				query		string	false	"Modes to send (repeated, comma list or JSON list)"
//	@Param			cancel_on_disconnect	query		bool	false	"Cancel the run if this client goes away"
//	@Success		200						{string}	string	"text/event-stream"
//	@Failure		422						{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/runs/{run_id}/stream [get]
func (h *Handlers) JoinStream(w http.ResponseWriter, r *http.Request) error {
	tid, rid, err := runs.PathIDs(r)
	if err != nil {
		return err
	}
	return h.joinStream(w, r, tid, rid)
}

// JoinStreamStateless godoc
//
//	@Summary		Join a run's stream by run id
//	@ID				join_run_stream_stateless
//	@Description	As GET /threads/{thread_id}/runs/{run_id}/stream, for any run (the Location of POST /runs/stream).
//	@Tags			runs
//	@Produce		text/event-stream
//	@Param			run_id					path		string	true	"Run ID"	format(uuid)
//	@Param			Last-Event-ID			header		string	false	"Resume after this event id (-1: from the start)"
//	@Param			last_event_id			query		string	false	"Last-Event-ID for clients that cannot send the header (EventSource's first request); the header wins"
//	@Param			stream_mode				query		string	false	"Modes to send"
//	@Param			cancel_on_disconnect	query		bool	false	"Cancel the run if this client goes away"
//	@Success		200						{string}	string	"text/event-stream"
//	@Failure		422						{object}	httpx.ErrorBody
//	@Router			/runs/{run_id}/stream [get]
func (h *Handlers) JoinStreamStateless(w http.ResponseWriter, r *http.Request) error {
	rid, err := httpx.PathUUID(r, "run_id", "run")
	if err != nil {
		return err
	}
	return h.joinStream(w, r, uuid.Nil, rid)
}

// threadEvent is an event of a thread stream: a stored event with its run.
type threadEvent struct {
	StoredEvent
	RunID     uuid.UUID `db:"run_id"`
	CreatedAt time.Time `db:"created_at"`
}

// threadCursor is a position in a thread's events; its text form
// "<unix µs>.<seq>.<run id>" is the event id of thread streams.
type threadCursor struct {
	at    time.Time
	runID uuid.UUID
	seq   int64
}

func (c threadCursor) String() string {
	return strconv.FormatInt(c.at.UnixMicro(), 10) + "." + strconv.FormatInt(c.seq, 10) + "." + c.runID.String()
}

func parseThreadCursor(v string) (threadCursor, error) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) == 3 {
		us, err1 := strconv.ParseInt(parts[0], 10, 64)
		seq, err2 := strconv.ParseInt(parts[1], 10, 64)
		id, err3 := uuid.Parse(parts[2])
		if err1 == nil && err2 == nil && err3 == nil {
			return threadCursor{at: time.UnixMicro(us), runID: id, seq: seq}, nil
		}
	}
	return threadCursor{}, apperr.Errorf(apperr.Invalid, "Invalid Last-Event-ID %q: must be an id this thread stream sent", v)
}

// threadEventsAfter returns up to limit events of the thread's runs after c.
func (s *Service) threadEventsAfter(ctx context.Context, threadID uuid.UUID, c threadCursor, limit int) ([]threadEvent, error) {
	rows, err := s.db.Query(ctx, `SELECT seq, event, data, ref, run_id, created_at FROM run_events
		WHERE thread_id = $1 AND (created_at, run_id, seq) > ($2, $3, $4)
		AND EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $6)
		ORDER BY created_at, run_id, seq LIMIT $5`, threadID, c.at, c.runID, c.seq, limit, auth.Tenant(ctx))
	if err != nil {
		return nil, err
	}
	evs, err := pgx.CollectRows(rows, pgx.RowToStructByName[threadEvent])
	if err != nil {
		return nil, err
	}
	kr := crypt.FromContext(ctx)
	for i := range evs {
		if err := openData(kr, &evs[i].Data, evs[i].RunID, evs[i].Seq); err != nil {
			return nil, err
		}
	}
	var items []eventlog.Item
	for i := range evs {
		if e := &evs[i]; e.Ref != nil {
			items = append(items, eventlog.Item{RunID: e.RunID, Seq: e.Seq, Data: &e.Data, Ref: &e.Ref})
		}
	}
	return evs, s.render.Render(ctx, s.db, threadID, items)
}

// ThreadStream godoc
//
//	@Summary		Stream every run of a thread
//	@ID				join_thread_stream
//	@Description	Server-Sent Events of all runs on the thread, in order, until the client leaves: with stream_modes run_modes (default) every event of each run; with lifecycle only each run's metadata event and {"status":"run_done","run_id"} when it ends (state_update is accepted and sends nothing yet). Event ids are positions in the thread's log: Last-Event-ID resumes after one; without it only events from now on are sent. A comment line is sent every 5 s while idle.
//	@Tags			threads
//	@Produce		text/event-stream
//	@Param			thread_id		path		string	true	"Thread ID"	format(uuid)
//	@Param			stream_modes	query		string	false	"run_modes, lifecycle, state_update (repeated or comma list)"
//	@Param			Last-Event-ID	header		string	false	"Resume after this event id"
//	@Success		200				{string}	string	"text/event-stream"
//	@Failure		404				{object}	httpx.ErrorBody
//	@Failure		422				{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/stream [get]
func (h *Handlers) ThreadStream(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	lifecycle, runModes := false, false
	for _, m := range httpx.QueryList(r.URL.Query()["stream_modes"]) {
		switch m {
		case "lifecycle":
			lifecycle = true
		case "run_modes":
			runModes = true
		case "state_update":
		default:
			return apperr.Errorf(apperr.Invalid, "Invalid stream_modes %q: must be run_modes, lifecycle or state_update", m)
		}
	}
	if !lifecycle {
		runModes = true
	}
	ctx := r.Context()
	var cur threadCursor
	if v := strings.TrimSpace(r.Header.Get("Last-Event-ID")); v != "" {
		if cur, err = parseThreadCursor(v); err != nil {
			return err
		}
	} else {
		err := h.svc.db.QueryRow(ctx, `SELECT created_at, run_id, seq FROM run_events WHERE thread_id = $1
			AND EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2)
			ORDER BY created_at DESC, run_id DESC, seq DESC LIMIT 1`, tid, auth.Tenant(ctx)).Scan(&cur.at, &cur.runID, &cur.seq)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
	}
	var exists bool
	if err := h.svc.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1 AND tenant_id = $2)`,
		tid, auth.Tenant(ctx)).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return apperr.Errorf(apperr.NotFound, "Thread with ID %s not found", tid)
	}
	sub := h.svc.events.Subscribe(tid)
	defer h.svc.events.Unsubscribe(tid, sub)
	out := h.svc.startSSE(w)
	defer out.close()
	beat := time.NewTicker(h.svc.cfg.StreamHeartbeat)
	defer beat.Stop()
	poll := time.NewTicker(max(h.svc.cfg.PollInterval, h.svc.cfg.StreamHeartbeat))
	defer poll.Stop()
	for {
		evs, err := h.svc.threadEventsAfter(ctx, tid, cur, streamBatch)
		if err != nil {
			if !postgres.IsUnavailable(err) || ctx.Err() != nil {
				return h.streamError(out, ctx, err)
			}
			// The database is away: keep the stream open (heartbeats go
			// on) and read again at the next notification (the listener's
			// reconnect wakes every stream) or poll.
			if _, ok := h.idle(ctx, out, sub, beat, poll); !ok {
				return nil
			}
			continue
		}
		for _, e := range evs {
			cur = threadCursor{at: e.CreatedAt, runID: e.RunID, seq: e.Seq}
			name, data := e.Event, []byte(e.Data)
			switch {
			case e.Event == "end" && lifecycle:
				name, data = "metadata", jsonv.Must(map[string]any{"status": "run_done", "run_id": e.RunID.String()})
			case e.Event == "end", !runModes && e.Event != "metadata":
				continue
			}
			if err := out.sendID(name, data, cur.String()); err != nil {
				return nil
			}
		}
		if len(evs) == streamBatch {
			continue
		}
		if _, ok := h.idle(ctx, out, sub, beat, poll); !ok {
			return nil
		}
	}
}

// idle waits, on a stream with nothing new to send, for a reason to read
// the log again: a notification or the poll tick. It sends the heartbeat
// meanwhile. ok is false when the stream must end: the client went away or
// the server is shutting down.
func (h *Handlers) idle(ctx context.Context, out *sse, sub chan struct{}, beat, poll *time.Ticker) (woken, ok bool) {
	return h.idleWith(ctx, func() error { return out.write([]byte(": heartbeat\n\n")) }, sub, beat, poll)
}

// idleWith is idle with the heartbeat any transport sends (heartbeat).
func (h *Handlers) idleWith(ctx context.Context, heartbeat func() error, sub chan struct{}, beat, poll *time.Ticker) (woken, ok bool) {
	for {
		select {
		case <-ctx.Done():
			return false, false
		case <-h.svc.draining:
			return false, false
		case <-beat.C:
			if heartbeat() != nil {
				return false, false
			}
		case <-sub:
			return true, true
		case <-poll.C:
			return true, true
		}
	}
}

// streamBatch is how many events a stream reads from the log at a time:
// an event can hold a whole state, so a stream's memory stays bounded.
const streamBatch = 64
