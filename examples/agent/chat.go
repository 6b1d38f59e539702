package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/graph"
)

// ChatModel calls an OpenAI-compatible chat completions endpoint
// (POST {BaseURL}/chat/completions).
type ChatModel struct {
	BaseURL string // e.g. https://api.openai.com/v1 or http://localhost:11434/v1
	Model   string // default model name
	APIKey  string // sent as a bearer token when set
	// Client is the HTTP client (nil: http.DefaultClient).
	Client *http.Client
}

// ChatRequest is one model call.
type ChatRequest struct {
	Model    string // overrides ChatModel.Model when set
	System   string // prepended as a system message when set
	Messages []any  // LangChain message dicts (the messages channel)
	Tools    []Tool
	// OnChunk receives each streamed piece of the reply as an
	// AIMessageChunk dict (for the messages stream mode); nil drops them.
	OnChunk func(chunk map[string]any)
}

// Chat sends the conversation with streaming on and returns the reply as
// a LangChain ai message dict (tool calls in LangChain's {name, args, id}
// form). An endpoint that answers with a plain JSON completion instead of
// an event stream works too; then nothing is streamed.
func (m *ChatModel) Chat(ctx context.Context, req ChatRequest) (map[string]any, error) {
	model := req.Model
	if model == "" {
		model = m.Model
	}
	var msgs []any
	if req.System != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": req.System})
	}
	for _, lc := range req.Messages {
		if om := toOpenAI(lc); om != nil {
			msgs = append(msgs, om)
		}
	}
	body := map[string]any{"model": model, "messages": msgs, "stream": true}
	if len(req.Tools) > 0 {
		var tools []any
		for _, t := range req.Tools {
			tools = append(tools, map[string]any{"type": "function", "function": map[string]any{
				"name": t.Name, "description": t.Description, "parameters": t.Parameters}})
		}
		body["tools"] = tools
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(m.BaseURL, "/")+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream, application/json")
	if m.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+m.APIKey)
	}
	client := m.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("chat model: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return nil, fmt.Errorf("chat model: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	id := "run-" + uuid.NewString()
	var reply completion
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		reply, err = readStream(resp.Body, func(text string) {
			if req.OnChunk != nil {
				req.OnChunk(map[string]any{"type": "AIMessageChunk", "id": id, "content": text,
					"additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
					"tool_call_chunks": []any{}, "tool_calls": []any{}, "invalid_tool_calls": []any{}})
			}
		})
	} else {
		reply, err = readCompletion(resp.Body)
	}
	if err != nil {
		return nil, fmt.Errorf("chat model: %w", err)
	}
	msg := map[string]any{"type": "ai", "id": id, "content": reply.content,
		"response_metadata": map[string]any{"model_name": model, "finish_reason": reply.finish}}
	if len(reply.calls) > 0 {
		calls := make([]any, len(reply.calls))
		for i, c := range reply.calls {
			args := c.Function.Arguments
			if args == "" {
				args = "{}"
			}
			calls[i] = map[string]any{"id": c.ID, "type": "function",
				"function": map[string]any{"name": c.Function.Name, "arguments": args}}
		}
		msg["tool_calls"] = calls
	}
	return graph.NormalizeMessage(msg)
}

// toOpenAI converts a LangChain message dict to the chat completions
// format (nil for a type it has no equivalent of).
func toOpenAI(v any) map[string]any {
	m, _ := v.(map[string]any)
	switch m["type"] {
	case "human":
		return map[string]any{"role": "user", "content": m["content"]}
	case "system":
		return map[string]any{"role": "system", "content": graph.MessageText(m["content"])}
	case "tool":
		return map[string]any{"role": "tool", "tool_call_id": m["tool_call_id"], "content": graph.MessageText(m["content"])}
	case "ai":
		out := map[string]any{"role": "assistant", "content": graph.MessageText(m["content"])}
		calls, _ := m["tool_calls"].([]any)
		var oc []any
		for _, c := range calls {
			tc, _ := c.(map[string]any)
			oc = append(oc, map[string]any{"id": tc["id"], "type": "function",
				"function": map[string]any{"name": tc["name"], "arguments": jsonString(tc["args"])}})
		}
		if len(oc) > 0 {
			out["tool_calls"] = oc
		}
		return out
	}
	return nil
}

// toolCall is an OpenAI tool call, as completed or as accumulated from
// streamed deltas.
type toolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// completion is the model's reply.
type completion struct {
	content string
	calls   []toolCall
	finish  string
}

// readCompletion reads a non-streamed chat completion.
func readCompletion(r io.Reader) (completion, error) {
	var body struct {
		Choices []struct {
			Message struct {
				Content   *string    `json:"content"`
				ToolCalls []toolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(r).Decode(&body); err != nil {
		return completion{}, err
	}
	if len(body.Choices) == 0 {
		return completion{}, fmt.Errorf("no choices in the response")
	}
	c := body.Choices[0]
	out := completion{calls: c.Message.ToolCalls, finish: c.FinishReason}
	if c.Message.Content != nil {
		out.content = *c.Message.Content
	}
	return out, nil
}

// readStream reads a streamed chat completion (server-sent events of
// chat.completion.chunk objects, ending with "data: [DONE]"), calling
// onText with each piece of content as it arrives and assembling tool
// calls from their deltas by index.
func readStream(r io.Reader, onText func(string)) (completion, error) {
	var out completion
	var text strings.Builder
	calls := map[int]*toolCall{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string     `json:"content"`
					ToolCalls []toolCall `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return out, fmt.Errorf("bad stream chunk %q: %w", data, err)
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				onText(ch.Delta.Content)
			}
			for _, d := range ch.Delta.ToolCalls {
				c := calls[d.Index]
				if c == nil {
					c = &toolCall{Index: d.Index}
					calls[d.Index] = c
				}
				if d.ID != "" {
					c.ID = d.ID
				}
				c.Function.Name += d.Function.Name
				c.Function.Arguments += d.Function.Arguments
			}
			if ch.FinishReason != nil {
				out.finish = *ch.FinishReason
			}
		}
	}
	if err := sc.Err(); err != nil {
		return out, err
	}
	out.content = text.String()
	idx := make([]int, 0, len(calls))
	for i := range calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		out.calls = append(out.calls, *calls[i])
	}
	return out, nil
}
