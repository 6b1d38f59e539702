package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weftdev/weft/graph"
)

// Tool is a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object.
	Parameters map[string]any
	// Run executes the tool; its result (or error text) goes back to the
	// model as the tool message's content.
	Run func(ctx context.Context, args map[string]any) (string, error)
}

// NewAgent returns the "agent" graph:
//
//	channels: messages (add_messages)
//	START → model → (tools → model)* → END
//
// model sends the conversation and the tools to the chat model and
// appends its answer (an ai message, with tool_calls when it wants tools);
// a conditional edge goes to tools while the last message has tool calls;
// tools appends one tool message per call. config.configurable may set
// model (the model name) and system_prompt.
func NewAgent(m *ChatModel, tools []Tool) *graph.Graph {
	byName := map[string]Tool{}
	for _, t := range tools {
		byName[t.Name] = t
	}
	return &graph.Graph{
		ID:       "agent",
		Channels: []graph.Channel{{Name: "messages", Kind: graph.Messages, Default: []any{}}},
		Nodes: []graph.Node{
			{Name: "model", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				msgs, _ := in.Values["messages"].([]any)
				cfg := in.Configurable()
				model, _ := cfg["model"].(string)
				system, _ := cfg["system_prompt"].(string)
				reply, err := m.Chat(ctx, ChatRequest{Model: model, System: system, Messages: msgs, Tools: tools,
					OnChunk: in.MessageChunk})
				if err != nil {
					return nil, err
				}
				return graph.State{"messages": []any{reply}}, nil
			}},
			{Name: "tools", Func: func(ctx context.Context, in graph.NodeInput) (graph.State, error) {
				var out []any
				for _, call := range toolCalls(in.Values) {
					name, _ := call["name"].(string)
					args, _ := call["args"].(map[string]any)
					content, status := "", "success"
					if t, ok := byName[name]; !ok {
						content, status = fmt.Sprintf("Error: unknown tool %q", name), "error"
					} else if res, err := t.Run(ctx, args); err != nil {
						content, status = "Error: "+err.Error(), "error"
					} else {
						content = res
					}
					msg, err := graph.NormalizeMessage(map[string]any{"type": "tool", "name": name,
						"tool_call_id": call["id"], "content": content, "status": status})
					if err != nil {
						return nil, err
					}
					out = append(out, msg)
				}
				return graph.State{"messages": out}, nil
			}},
		},
		Edges: []graph.Edge{
			{From: graph.START, To: "model"},
			{From: "model", Targets: []string{"tools", graph.END}, Route: func(v graph.State) ([]string, error) {
				if len(toolCalls(v)) > 0 {
					return []string{"tools"}, nil
				}
				return []string{graph.END}, nil
			}},
			{From: "tools", To: "model"},
		},
		ConfigSchema: map[string]any{"title": "agent_config", "type": "object", "properties": map[string]any{
			"model":         map[string]any{"type": "string", "description": "chat model name (default: OPENAI_MODEL)"},
			"system_prompt": map[string]any{"type": "string", "description": "system message sent first"},
		}},
	}
}

// toolCalls returns the tool calls of the last message when it is an ai
// message ({name, args, id, type} each).
func toolCalls(v graph.State) []map[string]any {
	msgs, _ := v["messages"].([]any)
	if len(msgs) == 0 {
		return nil
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	if last["type"] != "ai" {
		return nil
	}
	calls, _ := last["tool_calls"].([]any)
	out := make([]map[string]any, 0, len(calls))
	for _, c := range calls {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// jsonString encodes v compactly ("" on failure).
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
