package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftdev/weft/internal/assistants"
)

// maxNameLen is the longest tool name MCP allows.
const maxNameLen = 128

var (
	spaces       = regexp.MustCompile(`\s+`)
	invalidChars = regexp.MustCompile(`[^A-Za-z0-9_.-]`)
)

// normalizeName turns an assistant's name into an MCP tool name
// (^[A-Za-z0-9_.-]{1,128}$), as the official server does: whitespace runs
// become "_", other characters outside the set are dropped, the result is
// cut at 128 characters.
func normalizeName(name string) string {
	n := spaces.ReplaceAllString(strings.TrimSpace(name), "_")
	n = invalidChars.ReplaceAllString(n, "")
	if len(n) > maxNameLen {
		n = n[:maxNameLen]
	}
	return n
}

// tool is one assistant as a tool.
type tool struct {
	name  string
	entry assistants.Entry
}

// directory names the tenant's assistants as tools, oldest first: an
// assistant's tool name is its normalized name; when an older assistant
// already holds that name (or the name normalizes to nothing), the name
// gets "-" and the first 8 hex digits of the assistant id, and failing
// that the whole id. Names so made do not change as assistants are
// created, only when an older namesake is renamed or deleted.
func (h *Handler) directory(ctx context.Context) ([]tool, error) {
	entries, err := h.cfg.Assistants.Directory(ctx, maxAssistants)
	if err != nil {
		return nil, err
	}
	if len(entries) == maxAssistants {
		h.cfg.Log.WarnContext(ctx, "mcp: the tenant has more assistants than tools/list names; the newest are left out",
			"limit", maxAssistants)
	}
	taken := make(map[string]bool, len(entries))
	out := make([]tool, 0, len(entries))
	for _, e := range entries {
		name := uniqueName(normalizeName(e.Name), e.AssistantID, taken)
		taken[name] = true
		out = append(out, tool{name: name, entry: e})
	}
	return out, nil
}

func uniqueName(base string, id uuid.UUID, taken map[string]bool) string {
	if base != "" && !taken[base] {
		return base
	}
	if base == "" {
		base = "assistant"
	}
	for _, suffix := range []string{id.String()[:8], id.String()} {
		b := base
		if len(b)+1+len(suffix) > maxNameLen {
			b = b[:maxNameLen-1-len(suffix)]
		}
		if n := b + "-" + suffix; !taken[n] {
			return n
		}
	}
	return id.String() // unreachable: ids are unique
}

// cursor encodes the position after the tool named name; a page starts
// after it in name order (so creating or deleting a tool does not shift
// the pages that follow).
func cursor(name string) string { return base64.RawURLEncoding.EncodeToString([]byte(name)) }

func parseCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", c)}
	}
	return string(b), nil
}

// listTools answers tools/list: one page of the tenant's tools in name
// order, each with its graph's input schema.
func (h *Handler) listTools(ctx context.Context, req *sdk.ListToolsRequest) (*sdk.ListToolsResult, error) {
	after := ""
	if req.Params != nil && req.Params.Cursor != "" {
		var err error
		if after, err = parseCursor(req.Params.Cursor); err != nil {
			return nil, err
		}
	}
	all, err := h.directory(ctx)
	if err != nil {
		return nil, h.internal(ctx, "list tools", err)
	}
	slices.SortFunc(all, func(a, b tool) int { return strings.Compare(a.name, b.name) })
	start, _ := slices.BinarySearchFunc(all, after, func(t tool, name string) int { return strings.Compare(t.name, name) })
	if start < len(all) && after != "" && all[start].name == after {
		start++
	}
	page := all[start:min(start+h.cfg.PageSize, len(all))]
	// The list is the tenant's: no shared cache may keep it, and it
	// changes whenever an assistant does.
	res := &sdk.ListToolsResult{Tools: make([]*sdk.Tool, 0, len(page)), Cacheable: sdk.Cacheable{CacheScope: "private"}}
	if start+len(page) < len(all) {
		res.NextCursor = cursor(page[len(page)-1].name)
	}
	var graphIDs []string
	for _, t := range page {
		if !slices.Contains(graphIDs, t.entry.GraphID) {
			graphIDs = append(graphIDs, t.entry.GraphID)
		}
	}
	schemas, err := h.cfg.Assistants.InputSchemas(ctx, graphIDs)
	if err != nil {
		return nil, h.internal(ctx, "list tools: input schemas", err)
	}
	for _, t := range page {
		res.Tools = append(res.Tools, toolOf(t, schemas[t.entry.GraphID]))
	}
	return res, nil
}

// toolOf describes t for tools/list.
func toolOf(t tool, schema json.RawMessage) *sdk.Tool {
	desc := ""
	if t.entry.Description != nil {
		desc = strings.TrimSpace(*t.entry.Description)
	}
	if desc == "" {
		desc = fmt.Sprintf("Runs the %s assistant (graph %s) with the arguments as its input and returns its output.",
			t.entry.Name, t.entry.GraphID)
	}
	no, yes := false, true
	return &sdk.Tool{
		Name:        t.name,
		Title:       t.entry.Name,
		Description: desc,
		InputSchema: inputSchema(schema),
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes},
		Meta: sdk.Meta{
			"weft.dev/assistant_id": t.entry.AssistantID.String(),
			"weft.dev/graph_id":     t.entry.GraphID,
		},
	}
}

// inputSchema is the tool input schema made of a graph's input schema: an
// object schema always (MCP requires one). A graph without a usable schema
// (none, not JSON, not an object's) takes {"type":"object"}. A list of
// chat messages becomes a string, the user's message, as on the official
// server (the graph's messages reducer reads a string as a human message).
func inputSchema(raw json.RawMessage) map[string]any {
	var s map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || s == nil {
		return map[string]any{"type": "object"}
	}
	switch typ := s["type"]; typ {
	case nil:
		s["type"] = "object"
	case "object":
	default:
		return map[string]any{"type": "object"}
	}
	simplifyMessages(s)
	return s
}

// langchainMessages are the $defs of a Python graph's schema that describe
// chat messages (and their parts), dropped when the messages become a
// string.
var langchainMessages = []string{"AIMessage", "AIMessageChunk", "HumanMessage", "HumanMessageChunk",
	"ChatMessage", "ChatMessageChunk", "SystemMessage", "SystemMessageChunk", "FunctionMessage",
	"FunctionMessageChunk", "ToolMessage", "ToolMessageChunk"}

var langchainParts = []string{"ToolCall", "ToolCallChunk", "InvalidToolCall", "UsageMetadata",
	"InputTokenDetails", "OutputTokenDetails"}

// simplifyMessages replaces, in an object schema, each property that is a
// list of chat messages with a string property.
func simplifyMessages(s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	replaced := false
	for key, p := range props {
		prop, _ := p.(map[string]any)
		if prop == nil || !isMessageList(prop) {
			continue
		}
		title, _ := prop["title"].(string)
		if title == "" {
			title = key
		}
		props[key] = map[string]any{"type": "string", "title": title,
			"description": "The user message to send to the agent."}
		replaced = true
	}
	if !replaced {
		return
	}
	if defs, ok := s["$defs"].(map[string]any); ok {
		for _, d := range slices.Concat(langchainMessages, langchainParts) {
			delete(defs, d)
		}
		if len(defs) == 0 {
			delete(s, "$defs")
		}
	}
}

// isMessageList tells whether prop describes a list of chat messages: its
// items refer to LangChain message definitions (a Python graph), or are
// objects with a content and a type or role (a Go or JS graph's schema).
func isMessageList(prop map[string]any) bool {
	if prop["type"] != "array" {
		return false
	}
	items, _ := prop["items"].(map[string]any)
	if items == nil {
		return false
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		alts, _ := items[k].([]any)
		for _, a := range alts {
			alt, _ := a.(map[string]any)
			ref, _ := alt["$ref"].(string)
			if name, ok := strings.CutPrefix(ref, "#/$defs/"); ok && slices.Contains(langchainMessages, name) {
				return true
			}
		}
	}
	ip, _ := items["properties"].(map[string]any)
	_, content := ip["content"]
	_, typ := ip["type"]
	_, role := ip["role"]
	return content && (typ || role)
}
