package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/graph"
	"github.com/weftdev/weft/internal/jsonv"
	"github.com/weftdev/weft/internal/runs"
)

// answerName names the artifact that holds the assistant's answer.
const answerName = "Assistant Response"

// taskOf is the A2A task of run: its state, the user's message that
// started it, and, once it ended, the answer (the last AI message of the
// thread's values, when the run wrote one) as an artifact and the agent's
// message of the status (the interrupt's question, the error).
func (h *Handlers) taskOf(ctx context.Context, run *runs.Run) (*task, error) {
	t := &task{ID: run.RunID.String(), ContextID: run.ThreadID.String(),
		Status: status{State: stateWorking, At: run.UpdatedAt.Time}}
	if in := userMessage(run); in != nil {
		t.History = append(t.History, *in)
	}
	switch run.Status {
	case runs.StatusPending:
		t.Status.State = stateSubmitted
		return t, nil
	case runs.StatusRunning:
		return t, nil
	case runs.StatusInterrupted:
		t.Status.State = stateCanceled
		return t, nil
	case runs.StatusError, runs.StatusTimeout:
		t.Status.State = stateFailed
		var e struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		_ = jsonv.Decode(run.Error, &e)
		text := strings.TrimPrefix(e.Error+": "+e.Message, ": ")
		if text == "" {
			text = "The run failed"
		}
		t.Status.Message = h.agentMessage(t, run.RunID, "error", []part{textPart(text)})
		return t, nil
	}
	// success: completed, or input-required when it paused on an interrupt.
	raw, err := h.runs.Result(ctx, run)
	if err != nil {
		return nil, err
	}
	var values struct {
		Messages   []map[string]any `json:"messages"`
		Interrupts []struct {
			Value json.RawMessage `json:"value"`
		} `json:"__interrupt__"`
	}
	_ = jsonv.Decode(raw, &values) // values without messages read as none
	if len(values.Interrupts) > 0 {
		t.Status.State = stateInputRequired
		t.Status.Message = h.agentMessage(t, run.RunID, "input-required", interruptParts(values.Interrupts[0].Value))
		return t, nil
	}
	t.Status.State = stateCompleted
	if id, text, ok := lastAnswer(values.Messages); ok {
		if id == "" {
			id = uuid.NewSHA1(run.RunID, []byte("answer")).String()
		}
		t.Artifacts = []artifact{{ID: id, Name: answerName, Parts: []part{textPart(text)}}}
		t.History = append(t.History, message{ID: id, Role: "agent", Parts: []part{textPart(text)},
			ContextID: t.ContextID, TaskID: t.ID})
	}
	return t, nil
}

// agentMessage is the agent's message of a task's status, its id stable
// per run and kind.
func (h *Handlers) agentMessage(t *task, runID uuid.UUID, kind string, parts []part) *message {
	return &message{ID: uuid.NewSHA1(runID, []byte(kind)).String(), Role: "agent", Parts: parts,
		ContextID: t.ContextID, TaskID: t.ID}
}

// interruptParts renders an interrupt's value: a string as text; an
// object with a string "question" (or "message") as that text plus the
// object as data; anything else as its JSON text plus itself as data.
func interruptParts(v json.RawMessage) []part {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return []part{textPart(s)}
	}
	var o map[string]any
	if json.Unmarshal(v, &o) == nil && o != nil {
		for _, k := range []string{"question", "message", "prompt"} {
			if q, ok := o[k].(string); ok && q != "" {
				return []part{textPart(q), {Data: v}}
			}
		}
	}
	return []part{textPart(string(v)), {Data: v}}
}

// lastAnswer is the AI message that ends msgs (after the last human
// message): its id and text. ok is false when the thread's last word is
// not the AI's (the run wrote no answer).
func lastAnswer(msgs []map[string]any) (id, text string, ok bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		typ, _ := m["type"].(string)
		switch typ {
		case "ai", "AIMessage", "AIMessageChunk":
			if t := graph.MessageText(m["content"]); t != "" {
				id, _ = m["id"].(string)
				return id, t, true
			}
		case "human", "HumanMessage":
			return "", "", false
		}
	}
	return "", "", false
}

// userMessage is the A2A message that started run, from its kwargs: the
// human message of its input, or the answer it resumed an interrupt with
// (nil when neither is there, as for a run created by the REST API
// without messages).
func userMessage(run *runs.Run) *message {
	var k runs.Kwargs
	if jsonv.Decode(run.Kwargs, &k) != nil {
		return nil
	}
	m := &message{Role: "user", ContextID: run.ThreadID.String(), TaskID: run.RunID.String()}
	switch {
	case k.Command != nil && jsonv.Present(k.Command.Resume):
		m.Parts = resumeParts(k.Command.Resume)
	case jsonv.Present(k.Input):
		var in struct {
			Messages []map[string]any `json:"messages"`
		}
		if jsonv.Decode(k.Input, &in) != nil {
			return nil
		}
		for i := len(in.Messages) - 1; i >= 0 && m.Parts == nil; i-- {
			if typ, _ := in.Messages[i]["type"].(string); typ == "human" {
				m.ID, _ = in.Messages[i]["id"].(string)
				m.Parts = []part{textPart(graph.MessageText(in.Messages[i]["content"]))}
			}
		}
	}
	if m.Parts == nil {
		return nil
	}
	if m.ID == "" {
		m.ID = uuid.NewSHA1(run.RunID, []byte("user")).String()
	}
	return m
}

// resumeParts renders a resume value as the user's message: a string as
// text, anything else as data.
func resumeParts(v json.RawMessage) []part {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return []part{textPart(s)}
	}
	return []part{{Data: v}}
}

// trimHistory keeps the last n messages of t's history (n nil: all).
func trimHistory(t *task, n *int) {
	if n != nil && *n >= 0 && *n < len(t.History) {
		t.History = t.History[len(t.History)-*n:]
	}
}

// input is what a client's message asks of a run: the human message
// (text, with any data parts as their JSON text) or, on an interrupted
// thread, the resume value (the text, or the one data part).
type input struct {
	id   string
	text string
	data json.RawMessage // the only part, when it is data
}

func readInput(m *inMessage) (*input, error) {
	if m == nil {
		return nil, errInvalidParams("params.message is required")
	}
	switch strings.ToLower(strings.TrimPrefix(m.Role, "ROLE_")) {
	case "user", "":
	default:
		return nil, errInvalidParams(fmt.Sprintf("params.message.role %q: a client's message has the user role", m.Role))
	}
	if len(m.Parts) == 0 {
		return nil, errInvalidParams("params.message.parts is empty: send at least one text part")
	}
	in := &input{id: m.MessageID}
	var texts []string
	for i, p := range m.Parts {
		switch {
		case p.Text != nil:
			texts = append(texts, *p.Text)
		case jsonv.Present(p.Data):
			texts = append(texts, string(p.Data))
			if len(m.Parts) == 1 {
				in.data = p.Data
			}
		case p.File != nil || p.URL != nil || p.Raw != nil || p.Kind == "file":
			return nil, &RPCError{Code: codeContentTypeNotSupported,
				Message: fmt.Sprintf("params.message.parts[%d] is a file: this agent takes text and data parts", i)}
		default:
			return nil, errInvalidParams(fmt.Sprintf("params.message.parts[%d] has no text or data", i))
		}
	}
	in.text = strings.Join(texts, "\n")
	return in, nil
}
