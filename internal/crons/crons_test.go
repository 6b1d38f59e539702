package crons_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fooBarSystem is the id of foo_bar's system assistant (uuid5 of the graph
// name, reference §1.2).
const fooBarSystem = "59bfe87c-f4fa-5cd5-8a97-4f116167b027"

// Create (stateless and on a thread), get, search with filters, sort,
// select and pagination headers, count, delete: the Cron object of
// reference §11 and what each field defaults to.
func TestCronCRUD(t *testing.T) {
	e := start(t, nil)
	tid := e.newThread(t)

	stateless := e.cron(t, "", map[string]any{"schedule": "*/5 * * * *", "assistant_id": "foo_bar",
		"input": fooBarInput, "metadata": map[string]any{"team": "a"}, "config": map[string]any{"tags": []any{"x"}}})
	for k, want := range map[string]any{"assistant_id": fooBarSystem, "thread_id": nil, "on_run_completed": "delete",
		"schedule": "*/5 * * * *", "timezone": "UTC", "end_time": nil, "user_id": nil, "enabled": true} {
		if js(stateless[k]) != js(want) {
			t.Errorf("stateless cron %s = %s, want %s (%s)", k, js(stateless[k]), js(want), js(stateless))
		}
	}
	wantTime(t, "next_run_date", stateless["next_run_date"], time.Date(2030, 1, 1, 0, 5, 0, 0, time.UTC))
	if js(stateless["metadata"]) != `{"team":"a"}` {
		t.Errorf("metadata = %s", js(stateless["metadata"]))
	}
	if p := stateless["payload"].(map[string]any); p["assistant_id"] != fooBarSystem || js(p["input"]) != `{"foo":""}` ||
		js(p["config"]) != `{"tags":["x"]}` {
		t.Errorf("payload = %s", js(p))
	}
	for _, f := range []string{"created_at", "updated_at"} {
		if parseTime(t, stateless[f]).IsZero() {
			t.Errorf("%s missing: %s", f, js(stateless))
		}
	}

	onThread := e.cron(t, tid, map[string]any{"schedule": "0 9 * * 1-5", "assistant_id": fooBarSystem,
		"timezone": "Europe/Paris", "enabled": false, "end_time": "2031-01-01T00:00:00Z",
		"multitask_strategy": "reject", "on_run_completed": "keep"})
	if onThread["thread_id"] != tid || onThread["on_run_completed"] != nil || onThread["enabled"] != false ||
		onThread["timezone"] != "Europe/Paris" {
		t.Fatalf("thread cron = %s", js(onThread))
	}
	wantTime(t, "end_time", onThread["end_time"], time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	// 2030-01-01 is a Tuesday: 09:00 in Paris (UTC+1 in winter).
	wantTime(t, "next_run_date", onThread["next_run_date"], time.Date(2030, 1, 1, 8, 0, 0, 0, time.UTC))
	third := e.cron(t, "", map[string]any{"schedule": "@hourly", "assistant_id": "echo_chat", "on_run_completed": "keep"})

	if got := e.getCron(t, onThread["cron_id"].(string)); js(got) != js(onThread) {
		t.Errorf("GET = %s\nwant  %s", js(got), js(onThread))
	}

	search := func(body map[string]any) ([]map[string]any, http.Header) {
		t.Helper()
		r := e.Must(http.StatusOK, "POST", "/runs/crons/search", body)
		var out []map[string]any
		r.JSON(t, &out)
		return out, r.Header
	}
	ids := func(list []map[string]any) string {
		var s []string
		for _, c := range list {
			s = append(s, c["cron_id"].(string)[:8])
		}
		return strings.Join(s, ",")
	}
	short := func(cs ...map[string]any) string { return ids(cs) }

	all, hdr := search(map[string]any{})
	if ids(all) != short(third, onThread, stateless) || hdr.Get("X-Pagination-Total") != "3" || hdr.Get("X-Pagination-Next") != "" {
		t.Errorf("search {} = %s (total %q next %q), want newest first", ids(all), hdr.Get("X-Pagination-Total"), hdr.Get("X-Pagination-Next"))
	}
	page, hdr := search(map[string]any{"limit": 2, "sort_by": "created_at", "sort_order": "asc"})
	if ids(page) != short(stateless, onThread) || hdr.Get("X-Pagination-Next") != "2" || hdr.Get("X-Pagination-Total") != "3" {
		t.Errorf("page 1 = %s (next %q total %q)", ids(page), hdr.Get("X-Pagination-Next"), hdr.Get("X-Pagination-Total"))
	}
	page, hdr = search(map[string]any{"limit": 2, "offset": 2, "sort_by": "created_at", "sort_order": "asc"})
	if ids(page) != short(third) || hdr.Get("X-Pagination-Next") != "" || hdr.Get("X-Pagination-Total") != "3" {
		t.Errorf("page 2 = %s (next %q total %q)", ids(page), hdr.Get("X-Pagination-Next"), hdr.Get("X-Pagination-Total"))
	}
	// next_run_date: 00:05 (stateless), 01:00 (@hourly), 08:00 (Paris).
	if byNext, _ := search(map[string]any{"sort_by": "next_run_date", "sort_order": "asc"}); ids(byNext) != short(stateless, third, onThread) {
		t.Errorf("by next_run_date asc = %s", ids(byNext))
	}
	// thread_id: the stateless crons' NULLs last either way.
	if byThread, _ := search(map[string]any{"sort_by": "thread_id", "sort_order": "desc"}); byThread[0]["cron_id"] != onThread["cron_id"] {
		t.Errorf("by thread_id desc = %s", ids(byThread))
	}
	for _, tc := range []struct {
		filter map[string]any
		want   string
	}{
		{map[string]any{"assistant_id": "foo_bar"}, short(onThread, stateless)},
		{map[string]any{"assistant_id": fooBarSystem}, short(onThread, stateless)},
		{map[string]any{"thread_id": tid}, short(onThread)},
		{map[string]any{"enabled": false}, short(onThread)},
		{map[string]any{"enabled": true}, short(third, stateless)},
		{map[string]any{"metadata": map[string]any{"team": "a"}}, short(stateless)},
		{map[string]any{"assistant_id": "no_such_graph"}, ""},
	} {
		got, _ := search(tc.filter)
		if ids(got) != tc.want {
			t.Errorf("search %s = %s, want %s", js(tc.filter), ids(got), tc.want)
		}
		delete(tc.filter, "limit")
		var n int
		e.Must(http.StatusOK, "POST", "/runs/crons/count", tc.filter).JSON(t, &n)
		if n != len(got) {
			t.Errorf("count %s = %d, want %d", js(tc.filter), n, len(got))
		}
	}
	var n int
	e.Must(http.StatusOK, "POST", "/runs/crons/count", nil).JSON(t, &n)
	if n != 3 {
		t.Errorf("count = %d, want 3", n)
	}

	sel, _ := search(map[string]any{"select": []string{"cron_id", "schedule", "now"}, "thread_id": tid})
	if len(sel) != 1 || len(sel[0]) != 3 || sel[0]["schedule"] != "0 9 * * 1-5" {
		t.Fatalf("select = %s", js(sel))
	}
	wantTime(t, "now", sel[0]["now"], t0)

	for _, bad := range []map[string]any{
		{"sort_by": "schedule"}, {"sort_order": "up"}, {"limit": 0}, {"limit": 1001}, {"offset": -1},
		{"select": []string{"nope"}}, {"thread_id": "not-a-uuid"},
	} {
		if r := e.Do("POST", "/runs/crons/search", bad); r.Status != http.StatusUnprocessableEntity || r.Detail(t) == "" {
			t.Errorf("search %s: %d %s, want 422 with a detail", js(bad), r.Status, r.Body)
		}
		// A count holds the same fields to the same bounds (and ignores them).
		if r := e.Do("POST", "/runs/crons/count", bad); r.Status != http.StatusUnprocessableEntity || r.Detail(t) == "" {
			t.Errorf("count %s: %d %s, want 422 with a detail", js(bad), r.Status, r.Body)
		}
	}
	e.Must(http.StatusOK, "POST", "/runs/crons/count", map[string]any{"offset": 7, "limit": 1, "sort_by": "cron_id"}).JSON(t, &n)
	if n != 3 {
		t.Errorf("count with paging fields = %d, want 3", n)
	}

	e.Must(http.StatusNoContent, "DELETE", "/runs/crons/"+onThread["cron_id"].(string), nil)
	e.Must(http.StatusNotFound, "GET", "/runs/crons/"+onThread["cron_id"].(string), nil)
	e.Must(http.StatusNotFound, "DELETE", "/runs/crons/"+onThread["cron_id"].(string), nil)
	e.Must(http.StatusUnprocessableEntity, "DELETE", "/runs/crons/nope", nil)
	e.Must(http.StatusOK, "GET", "/threads/"+tid, nil) // the thread stays
	e.Must(http.StatusMethodNotAllowed, "GET", "/runs/crons/search", nil)

	// Deleting a thread deletes its crons.
	tid2 := e.newThread(t)
	c2 := e.cron(t, tid2, map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar"})
	e.Must(http.StatusNoContent, "DELETE", "/threads/"+tid2, nil)
	e.Must(http.StatusNotFound, "GET", "/runs/crons/"+c2["cron_id"].(string), nil)

	info := e.Must(http.StatusOK, "GET", "/info", nil).Map(t)
	if js(info["flags"].(map[string]any)["crons"]) != "true" {
		t.Errorf("/info flags = %s", js(info["flags"]))
	}
}

// Every malformed create or patch is a 4xx with a detail (never a 5xx)
// and changes nothing.
func TestCronValidation(t *testing.T) {
	e := start(t, nil)
	tid := e.newThread(t)
	ok := func() map[string]any {
		return map[string]any{"schedule": "* * * * *", "assistant_id": "foo_bar"}
	}
	with := func(k string, v any) map[string]any {
		b := ok()
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	snapshot := func() string {
		var s string
		if err := e.DB.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM crons)::text || '/' ||
			(SELECT count(*) FROM threads)::text || '/' || (SELECT count(*) FROM runs)::text`).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := snapshot()
	cases := []struct {
		path   string
		body   any
		status int
		detail string
	}{
		{"/runs/crons", with("schedule", nil), 422, "schedule is required"},
		{"/runs/crons", with("schedule", "* * * *"), 422, "Invalid schedule"},
		{"/runs/crons", with("schedule", "0 * * * * *"), 422, "Invalid schedule"},
		{"/runs/crons", with("schedule", "61 * * * *"), 422, "Invalid schedule"},
		{"/runs/crons", with("schedule", "every minute"), 422, "Invalid schedule"},
		{"/runs/crons", with("schedule", "@every 1m"), 422, "@every"},
		{"/runs/crons", with("schedule", "CRON_TZ=Asia/Tokyo * * * * *"), 422, "timezone field"},
		{"/runs/crons", with("schedule", "0 0 30 2 *"), 422, "never fires"},
		{"/runs/crons", with("schedule", 5), 422, "schedule"},
		{"/runs/crons", with("timezone", "Mars/Olympus"), 422, "Invalid timezone"},
		{"/runs/crons", with("timezone", "Local"), 422, "Invalid timezone"},
		{"/runs/crons", with("end_time", "tomorrow"), 422, "end_time"},
		{"/runs/crons", with("on_run_completed", "archive"), 422, "on_run_completed"},
		{"/runs/crons", with("assistant_id", nil), 422, "assistant"},
		{"/runs/crons", with("assistant_id", "no_such_graph"), 422, "assistant"},
		{"/runs/crons", with("assistant_id", "00000000-0000-4000-8000-000000000000"), 404, "not found"},
		// (Nodes the graph lacks and input keys that are not channels are
		// accepted, as LangGraph accepts them and runs do: runs_test.go.)
		{"/runs/crons", with("interrupt_before", 5), 422, "interrupt_before"},
		{"/runs/crons", with("input", []any{1}), 422, "input"},
		{"/runs/crons", with("multitask_strategy", "later"), 422, "multitask_strategy"},
		{"/runs/crons", with("durability", "forever"), 422, "durability"},
		{"/runs/crons", with("webhook", "ftp://example.com/hook"), 422, "webhook"},
		{"/runs/crons", "[]", 422, "object"},
		{"/runs/crons", "{", 422, "JSON"},
		{"/threads/" + "00000000-0000-4000-8000-000000000000" + "/runs/crons", ok(), 404, "Thread"},
		{"/threads/nope/runs/crons", ok(), 422, "thread"},
		{"/threads/" + tid + "/runs/crons", with("if_not_exists", "maybe"), 422, "if_not_exists"},
	}
	for _, tc := range cases {
		r := e.Do("POST", tc.path, tc.body)
		if r.Status != tc.status || !strings.Contains(r.Detail(t), tc.detail) {
			t.Errorf("POST %s %s: %d %s, want %d with %q", tc.path, js(tc.body), r.Status, r.Body, tc.status, tc.detail)
		}
	}
	if after := snapshot(); after != before {
		t.Fatalf("refused creates changed crons/threads/runs: %s → %s", before, after)
	}

	// A thread that does not exist is created with if_not_exists=create.
	newTid := "11111111-1111-4111-8111-111111111111"
	c := e.cron(t, newTid, with("if_not_exists", "create"))
	if c["thread_id"] != newTid {
		t.Fatalf("cron = %s", js(c))
	}
	md := e.Must(http.StatusOK, "GET", "/threads/"+newTid, nil).Map(t)["metadata"].(map[string]any)
	if md["graph_id"] != "foo_bar" || md["assistant_id"] != fooBarSystem {
		t.Errorf("created thread's metadata = %s", js(md))
	}

	id := c["cron_id"].(string)
	before = js(e.getCron(t, id))
	for _, tc := range []struct {
		body   any
		status int
		detail string
	}{
		{map[string]any{"schedule": "bad"}, 422, "Invalid schedule"},
		{map[string]any{"timezone": "Nowhere/City"}, 422, "Invalid timezone"},
		{map[string]any{"end_time": 12}, 422, "end_time"},
		{map[string]any{"interrupt_after": 5}, 422, "interrupt_after"},
		{map[string]any{"input": []int{1}}, 422, "input"},
		{map[string]any{"webhook": 3}, 422, "webhook"},
		{map[string]any{"enabled": "yes"}, 422, "enabled"},
	} {
		r := e.Do("PATCH", "/runs/crons/"+id, tc.body)
		if r.Status != tc.status || !strings.Contains(r.Detail(t), tc.detail) {
			t.Errorf("PATCH %s: %d %s, want %d with %q", js(tc.body), r.Status, r.Body, tc.status, tc.detail)
		}
	}
	if after := js(e.getCron(t, id)); after != before {
		t.Fatalf("refused patches changed the cron:\n%s\n%s", before, after)
	}
	e.Must(http.StatusNotFound, "PATCH", "/runs/crons/00000000-0000-4000-8000-000000000000", map[string]any{"enabled": false})
	e.Must(http.StatusUnprocessableEntity, "PATCH", "/runs/crons/nope", map[string]any{"enabled": false})
}

// PATCH: metadata merged, run fields replaced, a new schedule or timezone
// or re-enabling moves next_run_date to the first tick after now, and
// end_time set, cleared and past.
func TestCronPatch(t *testing.T) {
	e := start(t, nil)
	c := e.cron(t, "", map[string]any{"schedule": "0 * * * *", "assistant_id": "foo_bar", "input": fooBarInput,
		"metadata": map[string]any{"a": 1, "b": 1}})
	id := c["cron_id"].(string)
	wantTime(t, "next_run_date", c["next_run_date"], time.Date(2030, 1, 1, 1, 0, 0, 0, time.UTC))
	patch := func(body map[string]any) map[string]any {
		t.Helper()
		return e.Must(http.StatusOK, "PATCH", "/runs/crons/"+id, body).Map(t)
	}

	p := patch(map[string]any{"metadata": map[string]any{"b": 2, "c": 3}, "input": map[string]any{"foo": "x"},
		"on_run_completed": "keep", "webhook": "https://example.com/hook"})
	if js(p["metadata"]) != `{"a":1,"b":2,"c":3}` || p["on_run_completed"] != "keep" {
		t.Errorf("patched = %s", js(p))
	}
	pl := p["payload"].(map[string]any)
	if js(pl["input"]) != `{"foo":"x"}` || pl["webhook"] != "https://example.com/hook" || pl["assistant_id"] != fooBarSystem {
		t.Errorf("payload = %s", js(pl))
	}
	if p["next_run_date"] != c["next_run_date"] || p["updated_at"] == c["updated_at"] {
		t.Errorf("a payload change moved next_run_date or kept updated_at: %s", js(p))
	}
	if pl = patch(map[string]any{"webhook": nil})["payload"].(map[string]any); pl["webhook"] != nil {
		t.Errorf("webhook null did not remove it: %s", js(pl))
	}

	e.clk.Set(time.Date(2030, 1, 1, 0, 20, 0, 0, time.UTC))
	p = patch(map[string]any{"schedule": "*/15 * * * *"})
	wantTime(t, "next_run_date after a new schedule", p["next_run_date"], time.Date(2030, 1, 1, 0, 30, 0, 0, time.UTC))
	p = patch(map[string]any{"schedule": "0 9 * * *", "timezone": "America/New_York"})
	wantTime(t, "next_run_date in New York", p["next_run_date"], time.Date(2030, 1, 1, 14, 0, 0, 0, time.UTC))
	p = patch(map[string]any{"end_time": "2030-01-01T12:00:00Z"})
	if p["next_run_date"] != nil {
		t.Errorf("end_time before the next tick: next_run_date = %v, want null", p["next_run_date"])
	}
	p = patch(map[string]any{"end_time": nil})
	if p["end_time"] != nil {
		t.Errorf("end_time null: %v", p["end_time"])
	}
	wantTime(t, "next_run_date after the end was removed", p["next_run_date"], time.Date(2030, 1, 1, 14, 0, 0, 0, time.UTC))

	p = patch(map[string]any{"enabled": false})
	if p["enabled"] != false || p["next_run_date"] == nil {
		t.Errorf("disabled = %s", js(p))
	}
	e.clk.Set(time.Date(2030, 1, 3, 10, 0, 0, 0, time.UTC)) // two days later
	p = patch(map[string]any{"enabled": true})
	wantTime(t, "next_run_date after re-enabling", p["next_run_date"], time.Date(2030, 1, 3, 14, 0, 0, 0, time.UTC))

	// A patch from the 1.x SDK with nothing set changes nothing but updated_at.
	q := patch(map[string]any{})
	delete(q, "updated_at")
	delete(p, "updated_at")
	if js(q) != js(p) {
		t.Errorf("empty patch changed the cron:\n%s\n%s", js(p), js(q))
	}
}
