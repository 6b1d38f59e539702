package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// conformance sends requests to a real server and holds each answer to
// the operation of api/openapi.yaml it names: a status the operation
// declares, in a media type it declares, with a body its schema admits.
type conformance struct {
	t   *testing.T
	s   *servertest.Server
	doc *openapi3.T
}

// call sends method to the path template tmpl with args substituted in
// order ({thread_id} …), query appended, body (nil: none) as JSON, checks
// the answer against the spec, and returns it.
func (c *conformance) call(method, tmpl string, args []string, query string, body any, want int) *servertest.Response {
	c.t.Helper()
	path := tmpl
	for _, a := range args {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		path = path[:i] + url.PathEscape(a) + path[j+1:]
	}
	if query != "" {
		path += "?" + query
	}
	r := c.s.Do(method, path, body)
	if r.Status != want {
		c.t.Fatalf("%s %s: status %d, want %d; body %.300s", method, path, r.Status, want, r.Body)
	}
	item := c.doc.Paths.Find(tmpl)
	if item == nil || item.GetOperation(method) == nil {
		c.t.Fatalf("%s %s: no such operation in api/openapi.yaml", method, tmpl)
	}
	req, _ := http.NewRequest(method, c.s.URL+path, nil)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req,
			Route: &routers.Route{Spec: c.doc, Path: tmpl, PathItem: item, Method: method, Operation: item.GetOperation(method)}},
		Status: r.Status, Header: r.Header, Body: io.NopCloser(bytes.NewReader(r.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		c.t.Errorf("%s %s: the %d answer does not conform to api/openapi.yaml: %v\nbody: %.600s", method, path, r.Status, err, r.Body)
	}
	return r
}

// The answers the issue found at odds with the spec conform to it now: a
// run's and a cron's null enums, a missing store item (null), a state read
// with the window defaults a generated client sends, dispatch views with
// null cancel_action / last_error / attempt error, a worker's raw
// checkpoint reads, a message page of a channel of strings, a stream
// operation's 404 (JSON), POST /runs/batch's 400, a protocol command.
func TestResponsesConformToOpenAPI(t *testing.T) {
	t.Parallel()
	c := &conformance{t: t, s: servertest.Start(t), doc: loadSpec(t)}
	th := c.call("POST", "/threads", nil, "", map[string]any{"metadata": map[string]any{"graph_id": "foo_bar"}}, 200).Map(t)
	tid := th["thread_id"].(string)
	c.call("POST", "/threads/{thread_id}/runs/wait", []string{tid}, "", map[string]any{"assistant_id": "foo_bar",
		"input": map[string]any{"foo": "x"}}, 200)
	var runs []map[string]any
	c.call("GET", "/threads/{thread_id}/runs", []string{tid}, "", nil, 200).JSON(t, &runs)
	if len(runs) != 1 || runs[0]["webhook_state"] != nil {
		t.Fatalf("runs: %v", runs)
	}
	rid := runs[0]["run_id"].(string)
	c.call("GET", "/threads/{thread_id}/runs/{run_id}", []string{tid, rid}, "", nil, 200)
	c.call("GET", "/runs/{run_id}", []string{rid}, "", nil, 200)
	c.call("GET", "/threads/{thread_id}/runs/{run_id}/join", []string{tid, rid}, "", nil, 200)
	var hist []map[string]any
	c.call("GET", "/threads/{thread_id}/runs/{run_id}/dispatches", []string{tid, rid}, "", nil, 200).JSON(t, &hist)
	if len(hist) != 1 || hist[0]["cancel_action"] != nil || hist[0]["last_error"] != nil {
		t.Fatalf("dispatches: %v", hist)
	}
	c.call("GET", "/dispatches", nil, "limit=5", nil, 200)
	c.call("GET", "/inspect/threads/{thread_id}/runs", []string{tid}, "", nil, 200)
	c.call("GET", "/inspect/threads/{thread_id}/checkpoints", []string{tid}, "", nil, 200)

	// A cron on a thread has no on_run_completed (null).
	cron := c.call("POST", "/threads/{thread_id}/runs/crons", []string{tid}, "", map[string]any{"assistant_id": "foo_bar",
		"schedule": "0 0 1 1 *"}, 200).Map(t)
	if v, ok := cron["on_run_completed"]; !ok || v != nil {
		t.Fatalf("a thread's cron: %v", cron)
	}
	c.call("GET", "/runs/crons/{cron_id}", []string{cron["cron_id"].(string)}, "", nil, 200)
	c.call("POST", "/runs/crons/search", nil, "", map[string]any{}, 200)

	// State reads, with what a generated client sends by default.
	c.call("GET", "/threads/{thread_id}/state", []string{tid}, "window_channel=messages", nil, 200)
	c.call("GET", "/threads/{thread_id}/state", []string{tid}, "messages_window=5&window_channel=bar&summary=true", nil, 200)
	c.call("GET", "/threads/{thread_id}/history", []string{tid}, "", nil, 200)
	c.call("POST", "/threads/{thread_id}/state/checkpoint", []string{tid}, "", map[string]any{"checkpoint": map[string]any{"checkpoint_id": nil}}, 200)
	page := c.call("GET", "/threads/{thread_id}/messages", []string{tid}, "channel=bar", nil, 200).Map(t)
	if recs, _ := page["records"].([]any); len(recs) == 0 {
		t.Fatalf("bar's page: %v", page)
	} else if _, isString := recs[0].(map[string]any)["message"].(string); !isString {
		t.Fatalf("bar's elements are strings: %v", recs[0])
	}

	// The store: an item, then a missing one (200 null).
	c.call("PUT", "/store/items", nil, "", map[string]any{"namespace": []string{"u", "1"}, "key": "k",
		"value": map[string]any{"colour": "blue"}}, 204)
	c.call("GET", "/store/items", nil, "namespace=u.1&key=k", nil, 200)
	if r := c.call("GET", "/store/items", nil, "namespace=u.1&key=nope", nil, 200); strings.TrimSpace(string(r.Body)) != "null" {
		t.Fatalf("a missing item: %s", r.Body)
	}
	c.call("POST", "/store/items/search", nil, "", map[string]any{}, 200)

	// A worker's raw reads: channel_values and pending_writes are rows.
	tuple := c.call("POST", "/dispatch/checkpoints/get", nil, "", map[string]any{"thread_id": tid}, 200).Map(t)
	if rows, _ := tuple["channel_values"].([]any); len(rows) == 0 {
		t.Fatalf("raw tuple: %v", tuple)
	}
	c.call("POST", "/dispatch/checkpoints/list", nil, "", map[string]any{"thread_id": tid, "limit": 2}, 200)
	c.call("POST", "/dispatch/checkpoints/delta-history", nil, "", map[string]any{"thread_id": tid, "channels": []string{"bar"}}, 200)

	// Errors: a stream operation's 404 is JSON; POST /runs/batch's 400.
	missing := uuid.NewString()
	c.call("POST", "/threads/{thread_id}/runs/stream", []string{missing}, "", map[string]any{"assistant_id": "foo_bar"}, 404)
	c.call("GET", "/threads/{thread_id}/runs/{run_id}/stream", []string{tid, "nope"}, "", nil, 422)
	c.call("POST", "/runs/batch", nil, "", []any{map[string]any{"assistant_id": "foo_bar", "checkpoint_id": uuid.NewString()}}, 400)
	c.call("POST", "/runs/cancel", nil, "", map[string]any{"status": "pending", "thread_id": tid, "run_ids": []string{rid}}, 422)
	c.call("POST", "/dispatch/{dispatch_id}/ack", []string{missing}, "", map[string]any{"claim_token": ""}, 422)

	// Assistants, system.
	c.call("GET", "/assistants/{assistant_id}/schemas", []string{"foo_bar"}, "", nil, 200)
	c.call("GET", "/assistants/{assistant_id}/graph", []string{"foo_bar"}, "", nil, 200)
	c.call("POST", "/assistants/search", nil, "", map[string]any{"limit": 2}, 200)
	c.call("GET", "/info", nil, "", nil, 200)
	c.call("GET", "/ok", nil, "", nil, 200)
}
