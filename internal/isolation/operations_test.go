package isolation_test

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/store"
)

// p builds a path from ids.
type p = func(ids) string

func th(x ids) string  { return "/threads/" + x.Thread }
func run(x ids) string { return "/threads/" + x.Thread + "/runs/" + x.Run }
func pend(x ids) string {
	return "/threads/" + x.PendingThread + "/runs/" + x.PendingRun
}
func asst(x ids) string { return "/assistants/" + x.Assistant }
func body(v any) func(ids) any {
	return func(ids) any { return v }
}

const never = "0 0 1 1 *"

// operations is tenant B's walk: one case per operation of the spec.
func operations() []op {
	idOnly := func(method string, path p) func(*walker) {
		return func(w *walker) { w.same(http.StatusNotFound, method, path, nil) }
	}
	idBody := func(method string, path p, b func(ids) any) func(*walker) {
		return func(w *walker) { w.same(http.StatusNotFound, method, path, b) }
	}
	// system endpoints hold no tenant data: any answer but a 5xx, and
	// nothing of A's in it.
	system := func(path string) func(*walker) {
		return func(w *walker) { w.clean(0, "GET", path, nil) }
	}
	// worker is the worker API: workers serve every tenant (they claim
	// runs of every tenant for their graphs, and read the checkpoints of
	// the runs they execute), so it needs the worker scope, which a
	// tenant's credential lacks: refused, whatever the ids. The store a
	// worker's run uses is its run's tenant's (TestWorkerStoreActsForRunTenant).
	worker := func(method, path string) func(*walker) {
		return func(w *walker) {
			w.same(http.StatusForbidden, method, func(x ids) string { return strings.ReplaceAll(path, "{dispatch_id}", x.Dispatch) },
				func(x ids) any {
					return map[string]any{"worker_id": "b", "claim_token": uuid.NewString(), "thread_id": x.Thread, "graph_id": "foo_bar"}
				})
		}
	}
	runBody := func(x ids) any { return map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}} }
	withAssistant := func(x ids) any { return map[string]any{"assistant_id": x.Assistant, "input": map[string]any{}} }

	return []op{
		// System.
		{"GET /ok", system("/ok")},
		{"GET /livez", system("/livez")},
		{"GET /info", system("/info")},
		{"GET /openapi.yaml", system("/openapi.yaml")},
		{"GET /openapi.json", system("/openapi.json")},
		{"GET /docs", system("/docs")},
		{"GET /metrics", system("/metrics")},

		// MCP: B's tools are B's assistants and the shared ones; A's
		// assistant (named with the marker) is neither listed nor callable.
		{"POST /mcp", mcpCase("/mcp")},
		{"POST /mcp/", mcpCase("/mcp/")},
		{"GET /mcp/", func(w *walker) { w.clean(http.StatusMethodNotAllowed, "GET", "/mcp/", nil) }},
		{"DELETE /mcp/", func(w *walker) { w.clean(http.StatusMethodNotAllowed, "DELETE", "/mcp/", nil) }},

		// Threads.
		{"POST /threads", func(w *walker) {
			w.clean(http.StatusOK, "POST", "/threads", map[string]any{"metadata": map[string]any{"owner": "b"}})
			// Ids are global: B cannot take A's, and learns nothing of it.
			for _, ifExists := range []string{"raise", "do_nothing"} {
				w.clean(http.StatusConflict, "POST", "/threads", map[string]any{"thread_id": w.a.Thread, "if_exists": ifExists})
			}
			w.same(http.StatusUnprocessableEntity, "POST", func(ids) string { return "/threads" },
				func(x ids) any { return map[string]any{"parent_thread_id": x.Thread} })
		}},
		{"POST /threads/search", func(w *walker) {
			w.clean(http.StatusOK, "POST", "/threads/search", map[string]any{"limit": 1000})
			for _, f := range []map[string]any{
				{"metadata": map[string]any{"owner": marker}},
				{"values": map[string]any{"foo": marker}},
				{"ids": []string{w.a.Thread, w.a.Child, w.a.Copy, w.a.StreamThread, w.a.PendingThread}},
				{"parent_thread_id": w.a.Thread},
			} {
				w.empty("POST", "/threads/search", f, "[]")
			}
		}},
		{"POST /threads/count", func(w *walker) {
			w.empty("POST", "/threads/count", map[string]any{"metadata": map[string]any{"owner": marker}}, "0")
			w.empty("POST", "/threads/count", map[string]any{"parent_thread_id": w.a.Thread}, "0")
			w.clean(http.StatusOK, "POST", "/threads/count", map[string]any{})
		}},
		{"POST /threads/prune", func(w *walker) {
			for _, strategy := range []string{"delete", "keep_latest"} {
				r := w.clean(http.StatusOK, "POST", "/threads/prune", map[string]any{"strategy": strategy,
					"thread_ids": []string{w.a.Thread, w.a.Child, w.a.Copy, w.a.StreamThread}})
				if m := r.Map(w.rep.t); m["pruned_count"] != float64(0) {
					w.rep.leak("B's prune of A's threads (%s) pruned %v", strategy, m)
				}
			}
		}},
		{"GET /threads/{thread_id}", idOnly("GET", th)},
		{"PATCH /threads/{thread_id}", idBody("PATCH", th, body(map[string]any{"metadata": map[string]any{"owner": "b"}}))},
		{"DELETE /threads/{thread_id}", func(w *walker) {
			w.same(http.StatusNotFound, "DELETE", th, nil)
			w.same(http.StatusNotFound, "DELETE", func(x ids) string { return th(x) + "?strategy=cascade" }, nil)
		}},
		{"GET /threads/{thread_id}/children", idOnly("GET", func(x ids) string { return th(x) + "/children" })},
		// A copy of a thread that is not there is a 409, as the official servers answer.
		{"POST /threads/{thread_id}/copy", func(w *walker) {
			w.same(http.StatusConflict, "POST", func(x ids) string { return th(x) + "/copy" }, nil)
		}},
		{"GET /threads/{thread_id}/stream", idOnly("GET", func(x ids) string { return th(x) + "/stream" })},
		// A thread stream opened before its thread exists waits for it (as
		// LangGraph's server does), so A's thread, to B, is a stream that
		// waits and sends nothing, exactly as a forged id's.
		// The WebSocket transport: a GET that is no upgrade is answered the
		// same for A's thread and a forged one (TestProtocolWebSocket covers
		// what a socket sends).
		{"GET /threads/{thread_id}/stream/events", func(w *walker) {
			w.same(0, "GET", func(x ids) string { return th(x) + "/stream/events" }, nil)
		}},
		{"POST /threads/{thread_id}/stream/events", func(w *walker) {
			w.sameWaiting(func(x ids) string { return th(x) + "/stream/events" },
				map[string]any{"channels": []string{"values", "messages", "lifecycle"}})
		}},
		{"POST /threads/{thread_id}/commands", func(w *walker) {
			cmd := func(x ids) string { return th(x) + "/commands" }
			for _, c := range []map[string]any{
				{"id": 1, "method": "state.get", "params": map[string]any{}},
				{"id": 2, "method": "agent.getTree", "params": map[string]any{}},
				{"id": 3, "method": "input.respond", "params": map[string]any{"interrupt_id": "i", "response": "x"}},
			} {
				w.same(http.StatusOK, "POST", cmd, body(c))
			}
			// run.start creates a thread that does not exist: on A's id it
			// must refuse, and A's thread gets no run (the final snapshot).
			r := w.clean(http.StatusOK, "POST", cmd(w.a), map[string]any{"id": 4, "method": "run.start",
				"params": map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}}})
			if m := r.Map(w.rep.t); m["type"] != "error" {
				w.rep.leak("B's run.start on A's thread: %s", r.Body)
			}
		}},
		{"GET /threads/{thread_id}/state", idOnly("GET", func(x ids) string { return th(x) + "/state" })},
		{"POST /threads/{thread_id}/state", idBody("POST", func(x ids) string { return th(x) + "/state" },
			body(map[string]any{"values": map[string]any{"foo": "b"}}))},
		{"PATCH /threads/{thread_id}/state", idBody("PATCH", func(x ids) string { return th(x) + "/state" },
			body(map[string]any{"metadata": map[string]any{"owner": "b"}}))},
		{"POST /threads/{thread_id}/state/checkpoint", idBody("POST", func(x ids) string { return th(x) + "/state/checkpoint" },
			func(x ids) any { return map[string]any{"checkpoint": map[string]any{"checkpoint_id": x.Checkpoint}} })},
		{"GET /threads/{thread_id}/state/{checkpoint_id}", idOnly("GET", func(x ids) string { return th(x) + "/state/" + x.Checkpoint })},
		{"GET /threads/{thread_id}/history", idOnly("GET", func(x ids) string { return th(x) + "/history" })},
		{"POST /threads/{thread_id}/history", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(x ids) string { return th(x) + "/history" }, body(map[string]any{"limit": 10}))
			w.same(http.StatusNotFound, "POST", func(x ids) string { return th(x) + "/history" },
				func(x ids) any { return map[string]any{"before": map[string]any{"checkpoint_id": x.Checkpoint}} })
		}},

		{"GET /threads/{thread_id}/messages", idOnly("GET", func(x ids) string { return th(x) + "/messages?limit=10" })},
		{"GET /threads/{thread_id}/storage", idOnly("GET", func(x ids) string { return th(x) + "/storage" })},
		{"POST /threads/{thread_id}/summaries", idBody("POST", func(x ids) string { return th(x) + "/summaries" },
			body(map[string]any{"from_seq": 1, "to_seq": 1, "summary": "b"}))},
		{"GET /threads/{thread_id}/summaries", idOnly("GET", func(x ids) string { return th(x) + "/summaries" })},
		{"DELETE /threads/{thread_id}/summaries/{summary_id}", idOnly("DELETE", func(x ids) string { return th(x) + "/summaries/1" })},

		// Assistants.
		{"POST /assistants", func(w *walker) {
			w.clean(http.StatusOK, "POST", "/assistants", map[string]any{"graph_id": "foo_bar", "name": "b"})
			for _, ifExists := range []string{"raise", "do_nothing"} {
				w.clean(http.StatusConflict, "POST", "/assistants", map[string]any{"assistant_id": w.a.Assistant,
					"graph_id": "foo_bar", "if_exists": ifExists})
			}
		}},
		{"POST /assistants/search", func(w *walker) {
			w.clean(http.StatusOK, "POST", "/assistants/search", map[string]any{"limit": 1000})
			w.empty("POST", "/assistants/search", map[string]any{"metadata": map[string]any{"owner": marker}}, "[]")
			w.empty("POST", "/assistants/search", map[string]any{"name": marker}, "[]")
		}},
		{"POST /assistants/count", func(w *walker) {
			w.empty("POST", "/assistants/count", map[string]any{"metadata": map[string]any{"owner": marker}}, "0")
			w.empty("POST", "/assistants/count", map[string]any{"name": marker}, "0")
		}},
		{"GET /assistants/{assistant_id}", func(w *walker) {
			w.same(http.StatusNotFound, "GET", asst, nil)
			// The system assistants are shared: B reads them, cannot change them.
			w.clean(http.StatusOK, "GET", "/assistants/foo_bar", nil)
		}},
		{"PATCH /assistants/{assistant_id}", func(w *walker) {
			w.same(http.StatusNotFound, "PATCH", asst, body(map[string]any{"metadata": map[string]any{"owner": "b"}}))
			w.clean(http.StatusConflict, "PATCH", "/assistants/foo_bar", map[string]any{"metadata": map[string]any{"owner": "b"}})
		}},
		{"DELETE /assistants/{assistant_id}", func(w *walker) {
			w.same(http.StatusNotFound, "DELETE", asst, nil)
			w.same(http.StatusNotFound, "DELETE", func(x ids) string { return asst(x) + "?delete_threads=true" }, nil)
			w.clean(http.StatusConflict, "DELETE", "/assistants/foo_bar?delete_threads=true", nil)
		}},
		{"POST /assistants/{assistant_id}/versions", idBody("POST", func(x ids) string { return asst(x) + "/versions" }, body(map[string]any{}))},
		{"POST /assistants/{assistant_id}/latest", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(x ids) string { return asst(x) + "/latest" }, body(map[string]any{"version": 1}))
			w.clean(http.StatusConflict, "POST", "/assistants/foo_bar/latest", map[string]any{"version": 1})
		}},
		{"GET /assistants/{assistant_id}/graph", idOnly("GET", func(x ids) string { return asst(x) + "/graph" })},
		{"GET /assistants/{assistant_id}/schemas", idOnly("GET", func(x ids) string { return asst(x) + "/schemas" })},
		{"GET /assistants/{assistant_id}/subgraphs", idOnly("GET", func(x ids) string { return asst(x) + "/subgraphs" })},
		{"GET /assistants/{assistant_id}/subgraphs/{namespace}", idOnly("GET", func(x ids) string { return asst(x) + "/subgraphs/node_a" })},

		// Runs.
		{"POST /threads/{thread_id}/runs", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(x ids) string { return th(x) + "/runs" }, runBody)
			// if_not_exists create must not create a run on A's thread.
			w.same(http.StatusNotFound, "POST", func(x ids) string { return th(x) + "/runs" },
				body(map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}, "multitask_strategy": "interrupt"}))
			w.clean(http.StatusNotFound, "POST", th(w.a)+"/runs", map[string]any{"assistant_id": "foo_bar",
				"input": map[string]any{}, "if_not_exists": "create"})
			// A's assistant on B's own thread.
			w.same(http.StatusNotFound, "POST", func(ids) string { return "/threads/" + w.bThread + "/runs" }, withAssistant)
			// Runs from A's checkpoint on B's thread.
			w.same(http.StatusNotFound, "POST", func(ids) string { return "/threads/" + w.bThread + "/runs" },
				func(x ids) any {
					return map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}, "checkpoint_id": x.Checkpoint}
				})
		}},
		{"GET /threads/{thread_id}/runs", idOnly("GET", func(x ids) string { return th(x) + "/runs" })},
		{"POST /threads/{thread_id}/runs/wait", idBody("POST", func(x ids) string { return th(x) + "/runs/wait" }, runBody)},
		{"POST /threads/{thread_id}/runs/stream", idBody("POST", func(x ids) string { return th(x) + "/runs/stream" }, runBody)},
		{"GET /threads/{thread_id}/runs/{run_id}", func(w *walker) {
			w.same(http.StatusNotFound, "GET", run, nil)
			w.same(http.StatusNotFound, "GET", pend, nil)
			// A's run under B's own thread.
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/threads/" + w.bThread + "/runs/" + x.Run }, nil)
		}},
		{"DELETE /threads/{thread_id}/runs/{run_id}", idOnly("DELETE", run)},
		{"GET /threads/{thread_id}/runs/{run_id}/join", idOnly("GET", run2("/join"))},
		{"GET /threads/{thread_id}/runs/{run_id}/stream", func(w *walker) {
			// A joined stream of a run that is not there opens and sends one
			// error event, as the official servers answer.
			w.same(http.StatusOK, "GET", run2("/stream"), nil)
			w.same(http.StatusOK, "GET", func(x ids) string { return "/threads/" + x.StreamThread + "/runs/" + x.StreamRun + "/stream" }, nil)
		}},
		{"POST /threads/{thread_id}/runs/{run_id}/cancel", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(x ids) string { return pend(x) + "/cancel" }, nil)
			w.same(http.StatusNotFound, "POST", func(x ids) string { return pend(x) + "/cancel?action=rollback" }, nil)
		}},
		{"GET /threads/{thread_id}/runs/{run_id}/dispatches", idOnly("GET", run2("/dispatches"))},
		{"POST /runs", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(ids) string { return "/runs" }, withAssistant)
			w.clean(http.StatusOK, "POST", "/runs", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{}})
		}},
		{"POST /runs/wait", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(ids) string { return "/runs/wait" }, withAssistant)
			w.clean(http.StatusOK, "POST", "/runs/wait", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": "b"}})
		}},
		{"POST /runs/stream", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(ids) string { return "/runs/stream" }, withAssistant)
			w.clean(http.StatusOK, "POST", "/runs/stream", map[string]any{"assistant_id": "foo_bar", "input": map[string]any{"foo": "b"}})
		}},
		{"GET /runs/{run_id}", func(w *walker) {
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/runs/" + x.StatelessRun }, nil)
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/runs/" + x.Run }, nil)
		}},
		{"GET /runs/{run_id}/stream", func(w *walker) {
			w.same(http.StatusOK, "GET", func(x ids) string { return "/runs/" + x.StatelessRun + "/stream" }, nil)
		}},
		{"POST /runs/batch", func(w *walker) {
			w.same(0, "POST", func(ids) string { return "/runs/batch" }, func(x ids) any { return []any{withAssistant(x)} })
		}},
		{"POST /runs/cancel", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(ids) string { return "/runs/cancel" },
				func(x ids) any {
					return map[string]any{"thread_id": x.PendingThread, "run_ids": []string{x.PendingRun}}
				})
			// Every run of B's: A's pending run stays pending (the snapshot).
			w.clean(0, "POST", "/runs/cancel", map[string]any{"status": "all"})
		}},

		// Crons.
		{"POST /runs/crons", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(ids) string { return "/runs/crons" },
				func(x ids) any { return map[string]any{"assistant_id": x.Assistant, "schedule": never} })
			w.clean(http.StatusOK, "POST", "/runs/crons", map[string]any{"assistant_id": "foo_bar", "schedule": never})
		}},
		{"POST /threads/{thread_id}/runs/crons", func(w *walker) {
			w.same(http.StatusNotFound, "POST", func(x ids) string { return th(x) + "/runs/crons" },
				body(map[string]any{"assistant_id": "foo_bar", "schedule": never}))
			w.clean(http.StatusOK, "POST", "/threads/"+w.bThread+"/runs/crons", map[string]any{"assistant_id": "foo_bar", "schedule": never})
		}},
		{"POST /runs/crons/search", func(w *walker) {
			w.clean(http.StatusOK, "POST", "/runs/crons/search", map[string]any{"limit": 1000})
			w.empty("POST", "/runs/crons/search", map[string]any{"metadata": map[string]any{"owner": marker}}, "[]")
			w.empty("POST", "/runs/crons/search", map[string]any{"thread_id": w.a.Thread}, "[]")
			w.empty("POST", "/runs/crons/search", map[string]any{"assistant_id": w.a.Assistant}, "[]")
		}},
		{"POST /runs/crons/count", func(w *walker) {
			w.empty("POST", "/runs/crons/count", map[string]any{"metadata": map[string]any{"owner": marker}}, "0")
			w.empty("POST", "/runs/crons/count", map[string]any{"thread_id": w.a.Thread}, "0")
			w.empty("POST", "/runs/crons/count", map[string]any{"assistant_id": w.a.Assistant}, "0")
		}},
		{"GET /runs/crons/{cron_id}", func(w *walker) {
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/runs/crons/" + x.Cron }, nil)
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/runs/crons/" + x.ThreadCron }, nil)
		}},
		{"PATCH /runs/crons/{cron_id}", idBody("PATCH", func(x ids) string { return "/runs/crons/" + x.Cron },
			body(map[string]any{"enabled": false}))},
		{"DELETE /runs/crons/{cron_id}", idOnly("DELETE", func(x ids) string { return "/runs/crons/" + x.ThreadCron })},

		// The store: namespaces and keys are the client's, so B uses A's.
		{"PUT /store/items", func(w *walker) {
			w.clean(http.StatusNoContent, "PUT", "/store/items", map[string]any{"namespace": sharedNS, "key": sharedKey,
				"value": map[string]any{"text": "b"}})
		}},
		{"GET /store/items", func(w *walker) {
			r := w.clean(http.StatusOK, "GET", storeQuery(sharedNS, sharedKey), nil)
			if v, _ := r.Map(w.rep.t)["value"].(map[string]any); v["text"] != "b" {
				w.rep.leak("B's item under the namespace and key A uses too: %s", r.Body)
			}
			if r := w.clean(http.StatusOK, "GET", storeQuery(aNamespace, sharedKey), nil); strings.TrimSpace(string(r.Body)) != "null" {
				w.rep.leak("B read A's item: %s", r.Body)
			}
			// A run's store headers with A's dispatch and no claim: refused.
			r, err := w.b.try("GET", storeQuery(aNamespace, sharedKey), nil, map[string]string{
				store.HeaderDispatchID: w.a.Dispatch, store.HeaderClaimToken: uuid.NewString()})
			if err != nil || r.Status != http.StatusConflict || strings.Contains(string(r.Body), marker) {
				w.rep.leak("a store read with A's dispatch and a forged claim token: %v %v", r, err)
			}
		}},
		{"DELETE /store/items", func(w *walker) {
			w.clean(http.StatusNoContent, "DELETE", "/store/items", map[string]any{"namespace": aNamespace, "key": sharedKey})
		}},
		{"POST /store/items/search", func(w *walker) {
			w.clean(http.StatusOK, "POST", "/store/items/search", map[string]any{"namespace_prefix": []string{}, "limit": 1000})
			w.empty("POST", "/store/items/search", map[string]any{"namespace_prefix": aNamespace[:1]}, "[]")
			w.empty("POST", "/store/items/search", map[string]any{"namespace_prefix": []string{}, "filter": map[string]any{"text": marker}}, "[]")
			w.empty("POST", "/store/items/search", map[string]any{"namespace_prefix": []string{}, "query": marker}, "[]")
		}},
		{"POST /store/namespaces", func(w *walker) {
			w.clean(http.StatusOK, "POST", "/store/namespaces", map[string]any{})
			w.empty("POST", "/store/namespaces", map[string]any{"prefix": aNamespace[:1]}, "[]")
			w.empty("POST", "/store/namespaces", map[string]any{"suffix": aNamespace, "prefix": []string{"*"}}, "[]")
		}},

		// The queue across tenants is the admin's (the admin scope): a
		// tenant's credential is refused, and learns nothing.
		{"GET /dispatches", func(w *walker) {
			for _, q := range []string{"", "?state=acked", "?graph_id=foo_bar&limit=1000"} {
				w.clean(http.StatusForbidden, "GET", "/dispatches"+q, nil)
			}
		}},
		{"POST /dispatches/{dispatch_id}/retry", func(w *walker) {
			w.same(http.StatusForbidden, "POST", func(x ids) string { return "/dispatches/" + x.Dispatch + "/retry" }, nil)
		}},

		// The UI's read endpoints.
		{"GET /inspect/threads/storage", func(w *walker) {
			w.same(http.StatusOK, "GET", func(x ids) string {
				return "/inspect/threads/storage?" + url.Values{"thread_id": {x.Thread, x.Copy}}.Encode()
			}, nil)
			w.empty("GET", "/inspect/threads/storage?thread_id="+w.a.Thread, nil, "[]")
		}},
		{"GET /inspect/threads/{thread_id}/checkpoints", idOnly("GET", func(x ids) string { return "/inspect" + th(x) + "/checkpoints" })},
		{"GET /inspect/threads/{thread_id}/checkpoints/{checkpoint_id}", idOnly("GET", func(x ids) string {
			return "/inspect" + th(x) + "/checkpoints/" + x.Checkpoint
		})},
		{"GET /inspect/threads/{thread_id}/runs", idOnly("GET", func(x ids) string { return "/inspect" + th(x) + "/runs" })},
		{"GET /inspect/threads/{thread_id}/runs/{run_id}", func(w *walker) {
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/inspect" + run(x) }, nil)
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/inspect/threads/" + w.bThread + "/runs/" + x.Run }, nil)
		}},

		// A2A: A's assistant is unknown to B; A's runs are no tasks of B's
		// (TaskNotFound, as for forged ids); A's thread is no context of B's.
		{"GET /.well-known/agent-card.json", func(w *walker) {
			w.same(http.StatusNotFound, "GET", func(x ids) string { return "/.well-known/agent-card.json?assistant_id=" + x.Assistant }, nil)
			w.clean(http.StatusOK, "GET", "/.well-known/agent-card.json?assistant_id=echo_chat", nil)
		}},
		{"GET /a2a/{assistant_id}", a2aCard("")},
		{"GET /a2a/{assistant_id}/.well-known/agent-card.json", a2aCard("/.well-known/agent-card.json")},
		{"GET /a2a/{assistant_id}/.well-known/agent.json", a2aCard("/.well-known/agent.json")},
		{"POST /a2a/{assistant_id}", func(w *walker) {
			rpc := func(method string, params any) map[string]any {
				return map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
			}
			w.same(http.StatusNotFound, "POST", func(x ids) string { return "/a2a/" + x.Assistant },
				func(x ids) any { return rpc("GetTask", map[string]any{"id": x.Run}) })
			for _, method := range []string{"GetTask", "CancelTask", "SubscribeToTask", "tasks/get", "tasks/cancel", "tasks/resubscribe"} {
				for _, task := range []func(ids) string{
					func(x ids) string { return x.Run }, func(x ids) string { return x.StreamRun },
					func(x ids) string { return x.PendingRun }, func(x ids) string { return x.StatelessRun },
				} {
					w.same(http.StatusOK, "POST", func(ids) string { return "/a2a/echo_chat" },
						func(x ids) any { return rpc(method, map[string]any{"id": task(x)}) })
				}
			}
			msg := func(extra map[string]any) any {
				m := map[string]any{"messageId": uuid.NewString(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "b"}}}
				for k, v := range extra {
					m[k] = v
				}
				return rpc("SendMessage", map[string]any{"message": m})
			}
			for _, extra := range []map[string]any{{"contextId": w.a.Thread}, {"contextId": w.a.PendingThread},
				{"taskId": w.a.Run}, {"taskId": w.a.PendingRun}} {
				if r := w.clean(http.StatusOK, "POST", "/a2a/echo_chat", msg(extra)); !strings.Contains(string(r.Body), `"error"`) {
					w.rep.leak("B's message %v to A's context or task was taken: %.300s", extra, r.Body)
				}
			}
		}},

		// The worker API.
		{"POST /dispatch/claim", worker("POST", "/dispatch/claim")},
		{"POST /dispatch/cancellations", worker("POST", "/dispatch/cancellations")},
		{"POST /dispatch/{dispatch_id}/heartbeat", worker("POST", "/dispatch/{dispatch_id}/heartbeat")},
		{"POST /dispatch/{dispatch_id}/ack", worker("POST", "/dispatch/{dispatch_id}/ack")},
		{"POST /dispatch/{dispatch_id}/nack", worker("POST", "/dispatch/{dispatch_id}/nack")},
		{"POST /dispatch/{dispatch_id}/commit", worker("POST", "/dispatch/{dispatch_id}/commit")},
		{"POST /dispatch/graphs", worker("POST", "/dispatch/graphs")},
		{"POST /dispatch/graphs/errors", worker("POST", "/dispatch/graphs/errors")},
		{"POST /dispatch/checkpoints/get", worker("POST", "/dispatch/checkpoints/get")},
		{"POST /dispatch/checkpoints/list", worker("POST", "/dispatch/checkpoints/list")},
		{"POST /dispatch/checkpoints/delta-history", worker("POST", "/dispatch/checkpoints/delta-history")},
	}
}

// run2 is a path under A's finished run.
func run2(suffix string) p {
	return func(x ids) string { return run(x) + suffix }
}

// mcpCase is the isolation case of the MCP endpoint at path (/mcp, /mcp/):
// B's tools are B's assistants and the shared ones; A's assistant (named
// with the marker) is neither listed nor callable.
func mcpCase(path string) func(*walker) {
	return func(w *walker) {
		accept := map[string]string{"Accept": "application/json, text/event-stream"}
		list := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
		r, err := w.b.try("POST", path, list, accept)
		if err != nil || r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"tools"`) {
			w.rep.t.Errorf("POST %s tools/list: %v %v", path, r, err)
		} else if s := w.secretsIn(r.Body, describe("POST", path, list)); len(s) > 0 {
			w.rep.leak("POST %s tools/list returned A's %v: %.400s", path, s, r.Body)
		}
		call := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
			"params": map[string]any{"name": marker, "arguments": map[string]any{}}}
		r, err = w.b.try("POST", path, call, accept)
		if err != nil || r.Status != http.StatusOK || !strings.Contains(string(r.Body), "Unknown tool") ||
			strings.Contains(string(r.Body), w.a.Assistant) {
			w.rep.leak("POST %s tools/call of A's assistant: %v %v", path, r, err)
		}
	}
}

// a2aCard is the isolation case of an agent card under /a2a/{assistant_id}
// (suffix: the well-known path under it, or ""): A's assistant is unknown to
// B (404, as a forged id); a shared chat graph's card is B's to read.
func a2aCard(suffix string) func(*walker) {
	return func(w *walker) {
		w.same(http.StatusNotFound, "GET", func(x ids) string { return "/a2a/" + x.Assistant + suffix }, nil)
		w.clean(http.StatusOK, "GET", "/a2a/echo_chat"+suffix, nil)
	}
}
