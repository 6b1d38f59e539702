package a2a

import (
	"encoding/json"
	"strings"
	"time"
)

// The A2A objects this package serves, in one shape for both wire versions
// (render writes either): v1.0 (protobuf JSON: TASK_STATE_* and ROLE_*
// enums, parts told apart by their field, one-of wrappers such as {"task":
// …}) and v0.3 (kind fields, kebab-case states, lowercase roles).

// state is a task's state, named as v0.3 names it (v1.0: TASK_STATE_ +
// the name upper-cased, '-' → '_').
type state string

const (
	stateSubmitted     state = "submitted"
	stateWorking       state = "working"
	stateInputRequired state = "input-required"
	stateCompleted     state = "completed"
	stateCanceled      state = "canceled"
	stateFailed        state = "failed"
)

// terminal reports whether a task in state s can change no more.
func (s state) terminal() bool {
	return s == stateCompleted || s == stateCanceled || s == stateFailed
}

// part is one part of a message or artifact: text, or data (any JSON).
type part struct {
	Text *string
	Data json.RawMessage
}

func textPart(s string) part { return part{Text: &s} }

// message is an A2A message.
type message struct {
	ID        string
	Role      string // "user" or "agent"
	Parts     []part
	ContextID string
	TaskID    string
}

// artifact is an output of a task.
type artifact struct {
	ID    string
	Name  string
	Parts []part
}

// status is a task's status.
type status struct {
	State   state
	Message *message
	At      time.Time
}

// task is an A2A task: one run.
type task struct {
	ID        string
	ContextID string
	Status    status
	Artifacts []artifact
	History   []message
}

// renderer writes objects in one wire version.
type renderer struct{ v03 bool }

type obj = map[string]any

func (r renderer) state(s state) string {
	if r.v03 {
		return string(s)
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(string(s), "-", "_"))
}

func (r renderer) parts(ps []part) []any {
	out := []any{}
	for _, p := range ps {
		switch {
		case p.Text != nil && r.v03:
			out = append(out, obj{"kind": "text", "text": *p.Text})
		case p.Text != nil:
			out = append(out, obj{"text": *p.Text})
		case r.v03:
			// v0.3 data parts hold an object only.
			if strings.HasPrefix(strings.TrimSpace(string(p.Data)), "{") {
				out = append(out, obj{"kind": "data", "data": p.Data})
			}
		default:
			out = append(out, obj{"data": p.Data})
		}
	}
	return out
}

func (r renderer) message(m *message) obj {
	o := obj{"messageId": m.ID, "parts": r.parts(m.Parts)}
	if r.v03 {
		o["kind"] = "message"
		o["role"] = m.Role
	} else {
		o["role"] = "ROLE_" + strings.ToUpper(m.Role)
	}
	if m.ContextID != "" {
		o["contextId"] = m.ContextID
	}
	if m.TaskID != "" {
		o["taskId"] = m.TaskID
	}
	return o
}

func (r renderer) artifact(a *artifact) obj {
	return obj{"artifactId": a.ID, "name": a.Name, "parts": r.parts(a.Parts)}
}

func (r renderer) status(s *status) obj {
	o := obj{"state": r.state(s.State), "timestamp": s.At.UTC().Format(time.RFC3339Nano)}
	if s.Message != nil {
		o["message"] = r.message(s.Message)
	}
	return o
}

// task renders t (GetTask, CancelTask, and v0.3's message/send).
func (r renderer) task(t *task) obj {
	arts := []any{}
	for i := range t.Artifacts {
		arts = append(arts, r.artifact(&t.Artifacts[i]))
	}
	hist := []any{}
	for i := range t.History {
		hist = append(hist, r.message(&t.History[i]))
	}
	o := obj{"id": t.ID, "contextId": t.ContextID, "status": r.status(&t.Status), "artifacts": arts, "history": hist}
	if r.v03 {
		o["kind"] = "task"
	}
	return o
}

// sendResult is the result of SendMessage (v1.0: {"task": …}) or
// message/send (v0.3: the task itself).
func (r renderer) sendResult(t *task) obj {
	if r.v03 {
		return r.task(t)
	}
	return obj{"task": r.task(t)}
}

// streamTask is a stream's first event: the task.
func (r renderer) streamTask(t *task) obj { return r.sendResult(t) }

// statusUpdate is a stream's status event (final: the stream's last).
func (r renderer) statusUpdate(t *task, final bool) obj {
	o := obj{"taskId": t.ID, "contextId": t.ContextID, "status": r.status(&t.Status)}
	if r.v03 {
		o["kind"] = "status-update"
		o["final"] = final
		return o
	}
	return obj{"statusUpdate": o}
}

// artifactUpdate is a stream's artifact event: a's parts appended to the
// artifact with its id (appendTo) or replacing it; last marks its last
// chunk.
func (r renderer) artifactUpdate(t *task, a *artifact, appendTo, last bool) obj {
	o := obj{"taskId": t.ID, "contextId": t.ContextID, "artifact": r.artifact(a), "append": appendTo, "lastChunk": last}
	if r.v03 {
		o["kind"] = "artifact-update"
		return o
	}
	return obj{"artifactUpdate": o}
}

// inMessage is a message a client sends, either version: v1.0 roles are
// ROLE_USER / ROLE_AGENT, v0.3's user / agent; parts are told apart by
// their fields (v0.3 adds kind).
type inMessage struct {
	MessageID string          `json:"messageId"`
	ContextID string          `json:"contextId"`
	TaskID    string          `json:"taskId"`
	Role      string          `json:"role"`
	Parts     []inPart        `json:"parts"`
	Kind      string          `json:"kind"`
	Metadata  json.RawMessage `json:"metadata"`
}

// inPart is a part of a client's message.
type inPart struct {
	Kind string          `json:"kind"`
	Text *string         `json:"text"`
	Data json.RawMessage `json:"data"`
	// File (v0.3), URL and Raw (v1.0) carry files, which this server does
	// not take.
	File json.RawMessage `json:"file"`
	URL  *string         `json:"url"`
	Raw  *string         `json:"raw"`
}

// sendParams are the params of SendMessage / SendStreamingMessage and
// message/send / message/stream.
type sendParams struct {
	Message       *inMessage `json:"message"`
	Configuration *struct {
		// ReturnImmediately (v1.0) and Blocking false (v0.3) answer with
		// the task as soon as its run is queued.
		ReturnImmediately bool  `json:"returnImmediately"`
		Blocking          *bool `json:"blocking"`
		HistoryLength     *int  `json:"historyLength"`
	} `json:"configuration"`
}

// taskParams are the params of GetTask / CancelTask and tasks/get /
// tasks/cancel.
type taskParams struct {
	ID            string `json:"id"`
	HistoryLength *int   `json:"historyLength"`
}
