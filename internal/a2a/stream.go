package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/assistants"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/runs"
)

// streamPoll is how often a stream re-reads its run's log when no
// notification came, and sends a keep-alive comment.
const streamPoll = 5 * time.Second

// streamBatch is how many events a stream reads at a time.
const streamBatch = 200

// sse writes a JSON-RPC response per Server-Sent Event.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	id json.RawMessage
}

func (s *sse) send(result any) error {
	b, err := json.Marshal(Response{JSONRPC: "2.0", ID: s.id, Result: result})
	if err != nil {
		return err
	}
	return s.write(append(append([]byte("data: "), b...), '\n', '\n'))
}

func (s *sse) write(p []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(time.Minute))
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

// stream serves SendStreamingMessage / message/stream: the run starts as
// for SendMessage (an error before it does is an ordinary JSON-RPC error
// response), then the events go out as SSE (streamTask).
func (h *Handlers) stream(w http.ResponseWriter, r *http.Request, a *assistants.Assistant, req Request, rd renderer) {
	ctx := r.Context()
	p, err := decodeParams[sendParams](req.Params)
	var run *runs.Run
	if err == nil {
		run, err = h.start(ctx, a, p.Message, true)
	}
	if err != nil {
		writeRPC(w, req.ID, nil, h.rpcErr(ctx, err))
		return
	}
	h.streamTask(w, r, req.ID, run, rd)
}

// subscribe serves SubscribeToTask / tasks/resubscribe: the stream of a
// task that has not ended, from its current state (its answer's chunks
// from the first). A task that ended has no updates to follow:
// UnsupportedOperation (GetTask reads it).
func (h *Handlers) subscribe(w http.ResponseWriter, r *http.Request, a *assistants.Assistant, req Request, rd renderer) {
	ctx := r.Context()
	p, err := decodeParams[taskParams](req.Params)
	var run *runs.Run
	if err == nil {
		run, err = h.taskRun(ctx, a, p.ID)
	}
	if err == nil && run.Finished() {
		err = &RPCError{Code: codeUnsupportedOperation, Message: fmt.Sprintf("Task %s has ended: read it with GetTask", run.RunID)}
	}
	if err != nil {
		writeRPC(w, req.ID, nil, h.rpcErr(ctx, err))
		return
	}
	h.streamTask(w, r, req.ID, run, rd)
}

// streamTask sends run's task as SSE, each event a JSON-RPC response with
// the request's id: the task as it is (submitted when queued), a working
// status, an artifact update per chunk of the AI message the run streams
// (appended to the answer's artifact), and at the end the whole answer
// (replacing the chunks) and the final status. The events come from the
// run's durable log, so a stream can be served by any replica.
func (h *Handlers) streamTask(w http.ResponseWriter, r *http.Request, id json.RawMessage, run *runs.Run, rd renderer) {
	ctx := r.Context()
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "private, no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	out := &sse{w: w, rc: http.NewResponseController(w), id: id}

	t, err := h.taskOf(ctx, run)
	if err != nil {
		h.streamFail(ctx, out, err)
		return
	}
	if out.send(rd.streamTask(t)) != nil {
		return
	}
	t.Status.State = stateWorking
	t.Status.At = time.Now()
	if out.send(rd.statusUpdate(t, false)) != nil {
		return
	}
	if !h.follow(ctx, out, rd, t, run) {
		return
	}
	if run, err = h.runs.Get(ctx, run.ThreadID, run.RunID); err == nil {
		t, err = h.taskOf(ctx, run)
	}
	if err != nil {
		h.streamFail(ctx, out, err)
		return
	}
	for i := range t.Artifacts {
		if out.send(rd.artifactUpdate(t, &t.Artifacts[i], false, true)) != nil {
			return
		}
	}
	_ = out.send(rd.statusUpdate(t, true))
}

// follow sends an artifact update per AI message chunk of the run's log
// until the run ends; false when the stream cannot go on (the client left,
// or reading failed: the error went out).
func (h *Handlers) follow(ctx context.Context, out *sse, rd renderer, t *task, run *runs.Run) bool {
	wake, stop := h.streams.Wake(run.RunID)
	defer stop()
	poll := time.NewTicker(streamPoll)
	defer poll.Stop()
	var after int64
	started := map[string]bool{} // message ids with a chunk sent
	for {
		evs, err := h.streams.EventsAfter(ctx, run.RunID, after, streamBatch)
		if err != nil {
			h.streamFail(ctx, out, err)
			return false
		}
		for _, e := range evs {
			after = e.Seq
			if e.Event == "end" {
				return true
			}
			// A messages event stored with a reference keeps its chunk
			// whole (what the reference fills in is its metadata).
			if e.Event != "messages" {
				continue
			}
			id, text := chunkText(e.Data)
			if text == "" {
				continue
			}
			a := artifact{ID: id, Name: answerName, Parts: []part{textPart(text)}}
			if out.send(rd.artifactUpdate(t, &a, started[id], false)) != nil {
				return false
			}
			started[id] = true
		}
		if len(evs) == streamBatch {
			continue
		}
		if len(evs) == 0 {
			// A run can end without an end event (cancelled while queued,
			// dead-lettered): look at it.
			cur, err := h.runs.Get(ctx, run.ThreadID, run.RunID)
			if err != nil {
				h.streamFail(ctx, out, err)
				return false
			}
			if cur.Finished() {
				if rest, err := h.streams.EventsAfter(ctx, run.RunID, after, 1); err == nil && len(rest) == 0 {
					return true
				}
				continue
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-wake:
		case <-poll.C:
			if out.write([]byte(": keep-alive\n\n")) != nil {
				return false
			}
		}
	}
}

// chunkText reads a "messages" event ([chunk, metadata]): the id and text
// of an AI message chunk ("" for anything else).
func chunkText(data json.RawMessage) (id, text string) {
	var tuple []json.RawMessage
	if jsonv.Decode(data, &tuple) != nil || len(tuple) == 0 {
		return "", ""
	}
	var m map[string]any
	if jsonv.Decode(tuple[0], &m) != nil {
		return "", ""
	}
	switch m["type"] {
	case "AIMessageChunk", "ai", "AIMessage":
	default:
		return "", ""
	}
	id, _ = m["id"].(string)
	if id == "" {
		return "", ""
	}
	return id, graph.MessageText(m["content"])
}

// streamFail ends a stream with a JSON-RPC error event.
func (h *Handlers) streamFail(ctx context.Context, out *sse, err error) {
	if ctx.Err() != nil {
		return
	}
	b, merr := json.Marshal(Response{JSONRPC: "2.0", ID: out.id, Error: h.rpcErr(ctx, err)})
	if merr == nil {
		_ = out.write(append(append([]byte("data: "), b...), '\n', '\n'))
	}
}
