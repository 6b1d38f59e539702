package runs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
)

// wsFrame is any frame the protocol WebSocket sends: an answer or an event.
type wsFrame struct {
	pEvent
	ID      *int64         `json:"id"`
	Result  map[string]any `json:"result"`
	Error   string         `json:"error"`
	Message string         `json:"message"`
}

type protocolSocket struct {
	t    *testing.T
	conn *websocket.Conn
	ctx  context.Context
}

func dialProtocol(t *testing.T, url string) *protocolSocket {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http"), nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &protocolSocket{t: t, conn: conn, ctx: ctx}
}

func (p *protocolSocket) send(v any) {
	p.t.Helper()
	data, _ := json.Marshal(v)
	if err := p.conn.Write(p.ctx, websocket.MessageText, data); err != nil {
		p.t.Fatal(err)
	}
}

func (p *protocolSocket) next() wsFrame {
	p.t.Helper()
	_, data, err := p.conn.Read(p.ctx)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	var f wsFrame
	if err := json.Unmarshal(data, &f); err != nil {
		p.t.Fatalf("frame %s: %v", data, err)
	}
	return f
}

// answer reads frames until the answer to command id; events read on the
// way are returned with it.
func (p *protocolSocket) answer(id int64) (wsFrame, []wsFrame) {
	p.t.Helper()
	var evs []wsFrame
	for {
		f := p.next()
		if f.Type == "event" {
			evs = append(evs, f)
			continue
		}
		if f.ID != nil && *f.ID == id {
			return f, evs
		}
		p.t.Fatalf("unexpected frame %+v", f)
	}
}

// The WebSocket transport of protocol v2: commands and subscriptions on one
// connection, filtered and replayed as the SSE stream is.
func TestProtocolWebSocket(t *testing.T) {
	s := start(t)
	tid := uuid.NewString() // run.start creates the thread
	url := s.URL + "/threads/" + tid + "/stream/events"
	if r := s.Do("GET", "/threads/"+tid+"/stream/events", nil); r.Status != http.StatusBadRequest {
		t.Fatalf("GET without an upgrade: %d %s", r.Status, r.Body)
	}
	// Origins: another site's page is refused, a loopback one (the API's
	// CORS policy allows it) is not.
	wsURL := "ws" + strings.TrimPrefix(url, "http")
	if c, resp, err := websocket.Dial(t.Context(), wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example"}}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		if c != nil {
			_ = c.CloseNow()
		}
		t.Fatalf("cross-origin dial: %v %v", err, resp)
	}
	if c, _, err := websocket.Dial(t.Context(), wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://localhost:5173"}}}); err != nil {
		t.Fatalf("loopback-origin dial: %v", err)
	} else {
		_ = c.CloseNow()
	}
	ws := dialProtocol(t, url)

	// Not a command: an error frame with id null.
	ws.send("nope")
	if f := ws.next(); f.Type != "error" || f.ID != nil || f.Error != "invalid_argument" {
		t.Fatalf("bad frame answered %+v", f)
	}
	// A bad subscription: an error answering it.
	ws.send(map[string]any{"id": 9, "method": "subscription.subscribe", "params": map[string]any{"channels": []string{"bogus"}}})
	if f, _ := ws.answer(9); f.Type != "error" || f.Error != "invalid_argument" {
		t.Fatalf("bad subscription answered %+v", f)
	}

	// Subscribe before the run starts: its answer comes before its events.
	ws.send(map[string]any{"id": 1, "method": "subscription.subscribe", "params": map[string]any{"channels": []string{"values", "lifecycle"}}})
	ws.send(map[string]any{"id": 2, "method": "run.start", "params": map[string]any{"assistant_id": "echo_chat",
		"input": map[string]any{"messages": []any{map[string]any{"type": "human", "content": "over ws"}}}}})
	subscribed, runStarted := false, false
	var evs []wsFrame
	for !(subscribed && runStarted && len(evs) > 0 && terminal(evs[len(evs)-1].pEvent)) {
		f := ws.next()
		switch {
		case f.Type == "event":
			if !subscribed {
				t.Fatalf("event before the subscription's answer: %+v", f)
			}
			evs = append(evs, f)
		case f.Type == "success" && *f.ID == 1:
			if id, _ := f.Result["subscription_id"].(string); id == "" || f.Result["replayed_events"] == nil {
				t.Fatalf("subscribe answered %+v", f)
			}
			subscribed = true
		case f.Type == "success" && *f.ID == 2:
			if f.Result["run_id"] == nil {
				t.Fatalf("run.start answered %+v", f)
			}
			runStarted = true
		default:
			t.Fatalf("unexpected frame %+v", f)
		}
	}
	var last int64
	for _, e := range evs {
		if (e.Method != "values" && e.Method != "lifecycle") || e.Seq <= last {
			t.Fatalf("event %+v after seq %d", e, last)
		}
		last = e.Seq
	}
	final := evs[len(evs)-2].Params.Data["messages"].([]any)
	if len(final) != 2 || final[1].(map[string]any)["content"] != "echo: over ws" {
		t.Fatalf("final values %v", final)
	}

	// Replay: since 0 sends what the log holds, counted in the answer, after it.
	ws.send(map[string]any{"id": 3, "method": "subscription.subscribe", "params": map[string]any{"channels": []string{"lifecycle"}, "since": 0}})
	ack, early := ws.answer(3)
	if len(early) != 0 || ack.Type != "success" || ack.Result["replayed_events"] != float64(2) {
		t.Fatalf("replaying subscribe answered %+v after %d events", ack, len(early))
	}
	for _, want := range []string{"running", "completed"} {
		if f := ws.next(); f.Type != "event" || f.Method != "lifecycle" || f.Params.Data["event"] != want {
			t.Fatalf("replayed %+v, want lifecycle %s", f, want)
		}
	}
	// A namespace prefix that matches nothing replays nothing.
	ws.send(map[string]any{"id": 4, "method": "subscription.subscribe", "params": map[string]any{"channels": []string{"values"},
		"namespaces": [][]string{{"child"}}, "since": 0}})
	if f, _ := ws.answer(4); f.Result["replayed_events"] != float64(0) {
		t.Fatalf("filtered subscribe answered %+v", f)
	}
	// Unsubscribe, twice.
	sid := ack.Result["subscription_id"].(string)
	ws.send(map[string]any{"id": 5, "method": "subscription.unsubscribe", "params": map[string]any{"subscription_id": sid}})
	if f, _ := ws.answer(5); f.Type != "success" {
		t.Fatalf("unsubscribe answered %+v", f)
	}
	ws.send(map[string]any{"id": 6, "method": "subscription.unsubscribe", "params": map[string]any{"subscription_id": sid}})
	if f, _ := ws.answer(6); f.Type != "error" || f.Error != "no_such_subscription" {
		t.Fatalf("second unsubscribe answered %+v", f)
	}
	// The other commands answer as over HTTP.
	ws.send(map[string]any{"id": 7, "method": "state.get", "params": nil})
	if f, _ := ws.answer(7); f.Type != "success" || f.Result["values"] == nil {
		t.Fatalf("state.get answered %+v", f)
	}
	ws.send(map[string]any{"id": 8, "method": "no.such"})
	if f, _ := ws.answer(8); f.Type != "error" || f.Error != "unknown_command" {
		t.Fatalf("unknown command answered %+v", f)
	}
}
