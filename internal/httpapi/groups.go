package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/weftdev/weft/internal/httpx"
)

// Route groups that langgraph.json's http.disable_<group> turns off, as
// LangGraph's server removes them (Deps.Disabled).
const (
	GroupAssistants = "assistants"
	GroupThreads    = "threads"
	GroupRuns       = "runs"
	GroupStore      = "store"
	GroupMeta       = "meta"
	GroupUI         = "ui"
	GroupMCP        = "mcp"
	GroupA2A        = "a2a"
	// GroupWebhooks has no route: off, runs with a webhook still run and
	// their webhook is not sent (the server's webhook delivery).
	GroupWebhooks = "webhooks"
)

// Groups are the names http.disable_<group> may turn off.
var Groups = []string{GroupAssistants, GroupThreads, GroupRuns, GroupStore, GroupMeta, GroupUI, GroupMCP, GroupA2A, GroupWebhooks}

// groupsOf are the groups the route pattern belongs to (none: never turned
// off — the health probes, the worker API). A route in two groups is off
// when either is. The groups are LangGraph's:
//
//   - assistants: /assistants…
//   - threads: /threads… but their runs and protocol v2, the UI's reads of
//     threads (/inspect/threads…)
//   - runs: /runs… (crons too), /threads/{thread_id}/runs…, protocol v2
//     (/threads/{thread_id}/stream/events, /commands: LangGraph gates event
//     streaming with runs, as it starts runs), the dispatch queue's
//     operator routes (/dispatches…); /inspect/threads/{thread_id}/runs…
//     is threads' and runs'
//   - store: /store…
//   - meta: /info, /metrics, /docs, /openapi.json, /openapi.yaml (GET /ok
//     stays, answering {"ok": true} without checks, as LangGraph's does)
//   - ui: the web UI (/ and /ui/…; a project's ui components are the
//     front's, internal/cli/dev)
//   - mcp: /mcp…; a2a: /a2a/…, /.well-known/agent-card.json
func groupsOf(pattern string) []string {
	has := func(prefix string) bool {
		return pattern == prefix || strings.HasPrefix(pattern, prefix+"/")
	}
	switch {
	case pattern == "/info" || pattern == "/metrics" || has("/docs") || strings.HasPrefix(pattern, "/openapi."):
		return []string{GroupMeta}
	case has("/assistants"):
		return []string{GroupAssistants}
	case has("/store"):
		return []string{GroupStore}
	case has("/mcp"):
		return []string{GroupMCP}
	case has("/a2a") || strings.HasPrefix(pattern, "/.well-known/agent"):
		return []string{GroupA2A}
	case pattern == "/" || has("/ui"):
		return []string{GroupUI}
	case has("/runs") || has("/dispatches") || has("/threads/{thread_id}/runs") ||
		pattern == "/threads/{thread_id}/stream/events" || pattern == "/threads/{thread_id}/commands":
		return []string{GroupRuns}
	case has("/inspect/threads/{thread_id}/runs"):
		return []string{GroupThreads, GroupRuns}
	case has("/threads") || has("/inspect/threads"):
		return []string{GroupThreads}
	}
	return nil
}

// disabledGroups answers 404, as a path no route serves, to a request
// whose route belongs to a group that off turns off (nil when none is).
func disabledGroups(off map[string]bool, mux chi.Routes) func(http.Handler) http.Handler {
	any := false
	for g, on := range off {
		any = any || (on && g != GroupWebhooks)
	}
	if !any {
		return nil
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pattern, _ := resource(mux, r)
			for _, g := range groupsOf(pattern) {
				if off[g] {
					httpx.WriteJSON(w, http.StatusNotFound, httpx.ErrorBody{Detail: "Not Found"})
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}
