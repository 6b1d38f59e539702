package stream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/apperr"
	"github.com/weftdev/weft/internal/httpx"
	"github.com/weftdev/weft/internal/jsonv"
)

// The WebSocket transport of protocol v2: one connection carries the
// commands of POST /threads/{id}/commands and the events of POST
// /threads/{id}/stream/events, both ways, as JSON text messages. Events
// reach the socket through subscriptions (subscription.subscribe with the
// body of POST /stream/events as params: channels, namespaces, depth,
// since), each read by the same pump as an SSE stream (protocolPump): the
// same filter, replay and seq. A subscription's answer comes before the
// events it replays, so a client knows its subscription_id first.

// socketReadLimit bounds one message a client sends (a command).
const socketReadLimit = 1 << 20

// socketWriteTimeout bounds one message the server sends: a client that
// does not take it in that time is disconnected.
const socketWriteTimeout = time.Minute

// ProtocolSocket godoc
//
//	@Summary		Protocol v2 over a WebSocket
//	@ID				protocol_thread_socket
//	@Description	Upgrades to a WebSocket carrying protocol v2 both ways as JSON text messages. The client sends commands ({id, method, params}): those of POST /threads/{thread_id}/commands (run.start, input.respond, state.get, agent.getTree), plus subscription.subscribe (params as the body of POST /threads/{thread_id}/stream/events: channels, namespaces, depth, since; result {subscription_id, replayed_events}, sent before the events it replays) and subscription.unsubscribe {subscription_id}. The server sends the answers ({"type":"success"|"error","id",…}) and, for each subscription, the thread's events ({"type":"event","event_id","seq","method","params"}) with the same filtering, replay and seq as the SSE stream; a frame that is not a command is answered with an error frame of id null. A request without a WebSocket upgrade is a 400.
//	@Tags			threads
//	@Param			thread_id	path		string	true	"Thread ID"	format(uuid)
//	@Success		101			{string}	string	"Switching Protocols"
//	@Failure		400			{object}	httpx.ErrorBody
//	@Failure		422			{object}	httpx.ErrorBody
//	@Router			/threads/{thread_id}/stream/events [get]
func (h *Handlers) ProtocolSocket(w http.ResponseWriter, r *http.Request) error {
	tid, err := httpx.PathUUID(r, "thread_id", "thread")
	if err != nil {
		return err
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return apperr.Errorf(apperr.BadRequest, "GET /threads/%s/stream/events is a WebSocket: send an Upgrade: websocket request (or POST it for Server-Sent Events)", tid)
	}
	// Browsers do not apply CORS to WebSockets: the origins the API's CORS
	// policy allows (it has set Access-Control-Allow-Origin) may open one;
	// any other cross-origin page is refused (403) by Accept's same-origin
	// check.
	opts := &websocket.AcceptOptions{InsecureSkipVerify: w.Header().Get("Access-Control-Allow-Origin") != ""}
	conn, err := websocket.Accept(w, r, opts)
	if err != nil {
		return nil // Accept has answered the client
	}
	conn.SetReadLimit(socketReadLimit)
	h.svc.cfg.Metrics.StreamOpened()
	defer h.svc.cfg.Metrics.StreamClosed()
	ctx, cancel := context.WithCancel(r.Context())
	s := &socketSession{h: h, tid: tid, conn: conn, subs: map[string]context.CancelFunc{}}
	defer func() {
		cancel()
		s.wg.Wait()
		_ = conn.CloseNow()
	}()
	go func() {
		select {
		case <-h.svc.draining:
			_ = conn.Close(websocket.StatusGoingAway, "server shutting down")
		case <-ctx.Done():
		}
	}()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return nil // closed by either side
		}
		if err := s.handle(ctx, data); err != nil {
			h.svc.log.Error("protocol socket", "thread_id", tid, "error", err)
			_ = conn.Close(websocket.StatusInternalError, "internal error")
			return nil
		}
	}
}

// socketSession is one WebSocket connection.
type socketSession struct {
	h    *Handlers
	tid  uuid.UUID
	conn *websocket.Conn
	wmu  sync.Mutex // one writer at a time: answers and every subscription's events
	smu  sync.Mutex
	subs map[string]context.CancelFunc
	wg   sync.WaitGroup
}

// send writes one message.
func (s *socketSession) send(ctx context.Context, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, socketWriteTimeout)
	defer cancel()
	return s.conn.Write(wctx, websocket.MessageText, data)
}

// sendError writes an error frame answering id (nil: no command).
func (s *socketSession) sendError(ctx context.Context, id *int64, code, msg string) error {
	return s.send(ctx, ProtocolResponse{Type: "error", ID: id, Error: code, Message: msg})
}

// handle runs one message from the client. An error is the server's
// failure; a bad message is answered in-band.
func (s *socketSession) handle(ctx context.Context, data []byte) error {
	var cmd ProtocolCommand
	if err := jsonv.Decode(data, &cmd); err != nil {
		return s.sendError(ctx, nil, "invalid_argument", "A message must be a command: {id, method, params}")
	}
	if err := cmd.check(); err != nil {
		var ae *apperr.Error
		errors.As(err, &ae)
		return s.sendError(ctx, nil, "invalid_argument", ae.Message)
	}
	switch cmd.Method {
	case "subscription.subscribe":
		return s.subscribe(ctx, &cmd)
	case "subscription.unsubscribe":
		var p struct {
			SubscriptionID string `json:"subscription_id"`
		}
		if err := decodeParams(&cmd, &p); err != nil || p.SubscriptionID == "" {
			return s.sendError(ctx, cmd.ID, "invalid_argument", "subscription.unsubscribe requires a subscription_id")
		}
		s.smu.Lock()
		stop, ok := s.subs[p.SubscriptionID]
		delete(s.subs, p.SubscriptionID)
		s.smu.Unlock()
		if !ok {
			return s.sendError(ctx, cmd.ID, "no_such_subscription", "Unknown subscription: "+p.SubscriptionID)
		}
		stop()
		return s.answer(ctx, cmd.ID, map[string]any{})
	}
	resp, err := s.h.protocolAnswer(ctx, s.tid, &cmd)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	return s.sendOrGone(ctx, resp)
}

// answer writes a success frame answering id with result.
func (s *socketSession) answer(ctx context.Context, id *int64, result any) error {
	resp, err := s.h.protocolSuccess(ctx, s.tid, id, result)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	return s.sendOrGone(ctx, resp)
}

// sendOrGone is send where a failed write (the client went away) is no
// error: the read loop ends on its own.
func (s *socketSession) sendOrGone(ctx context.Context, v any) error {
	_ = s.send(ctx, v)
	return nil
}

// subscribe starts a subscription: the filter and start of POST
// /stream/events, read by protocolPump; the answer goes out once the
// events to replay are known, before them.
func (s *socketSession) subscribe(ctx context.Context, cmd *ProtocolCommand) error {
	var req ProtocolStreamRequest
	if err := decodeParams(cmd, &req); err != nil {
		return s.sendError(ctx, cmd.ID, "invalid_argument", err.(*protocolError).message)
	}
	f, err := req.filter()
	if err != nil {
		var ae *apperr.Error
		errors.As(err, &ae)
		return s.sendError(ctx, cmd.ID, "invalid_argument", ae.Message)
	}
	since := int64(-1)
	if req.Since != nil {
		since = *req.Since
	} else {
		start, err := s.h.svc.protocolStartOf(ctx, s.tid)
		switch {
		case apperr.CodeOf(err) == apperr.NotFound:
			// Not created yet (run.start creates it): its events from the first.
		case err != nil:
			return err
		default:
			since = start
		}
	}
	id := uuid.Must(uuid.NewV7()).String()
	sctx, stop := context.WithCancel(ctx)
	s.smu.Lock()
	s.subs[id] = stop
	s.smu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stop()
		ready := func(n int) error {
			resp, err := s.h.protocolSuccess(sctx, s.tid, cmd.ID, map[string]any{"subscription_id": id, "replayed_events": n})
			if err != nil {
				return err
			}
			return s.send(sctx, resp)
		}
		err := s.h.protocolPump(sctx, s.tid, since, f, ready, func(pe *protocolEvent) error { return s.send(sctx, pe) },
			func() error {
				pctx, cancel := context.WithTimeout(sctx, socketWriteTimeout)
				defer cancel()
				return s.conn.Ping(pctx)
			})
		if err != nil && !errors.Is(err, errClientGone) && sctx.Err() == nil {
			s.wmu.Lock()
			_ = s.conn.Write(sctx, websocket.MessageText, s.h.protocolErrorFrame(err))
			s.wmu.Unlock()
		}
	}()
	return nil
}
