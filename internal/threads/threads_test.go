package threads_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server/servertest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

type thread struct {
	ThreadID       string         `json:"thread_id"`
	CreatedAt      string         `json:"created_at"`
	UpdatedAt      string         `json:"updated_at"`
	StateUpdatedAt *string        `json:"state_updated_at"`
	Metadata       map[string]any `json:"metadata"`
	Status         string         `json:"status"`
	Config         map[string]any `json:"config"`
	Values         any            `json:"values"`
	Interrupts     map[string]any `json:"interrupts"`
	Error          any            `json:"error"`
	ParentThreadID *string        `json:"parent_thread_id"`
	ResourceID     *string        `json:"resource_id"`
}

func create(t *testing.T, s *servertest.Server, body any) thread {
	t.Helper()
	var th thread
	s.Must(http.StatusOK, "POST", "/threads", body).JSON(t, &th)
	return th
}

func child(t *testing.T, s *servertest.Server, parent string) thread {
	t.Helper()
	return create(t, s, map[string]any{"parent_thread_id": parent})
}

func getThread(t *testing.T, s *servertest.Server, id string) thread {
	t.Helper()
	var th thread
	s.Must(http.StatusOK, "GET", "/threads/"+id, nil).JSON(t, &th)
	return th
}

func parentOf(th thread) string {
	if th.ParentThreadID == nil {
		return ""
	}
	return *th.ParentThreadID
}

func wantDetail(t *testing.T, r *servertest.Response, status int, contains ...string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	d := r.Detail(t)
	for _, c := range contains {
		if !strings.Contains(d, c) {
			t.Fatalf("detail %q does not mention %q", d, c)
		}
	}
}

func TestCreateAndGetCarryEveryField(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	th := create(t, s, map[string]any{"metadata": map[string]any{"owner": "ana", "n": 1}})
	if _, err := uuid.Parse(th.ThreadID); err != nil {
		t.Fatalf("thread_id %q: %v", th.ThreadID, err)
	}
	got := getThread(t, s, th.ThreadID)
	if got.Status != "idle" || got.Values != nil || len(got.Interrupts) != 0 || got.Error != nil ||
		got.StateUpdatedAt != nil || got.Config == nil || got.ParentThreadID != nil || got.ResourceID != nil {
		t.Fatalf("fresh thread = %+v", got)
	}
	if got.Metadata["owner"] != "ana" || got.Metadata["n"] != float64(1) {
		t.Fatalf("metadata = %v", got.Metadata)
	}
	if !strings.HasSuffix(got.CreatedAt, "+00:00") || got.CreatedAt != got.UpdatedAt {
		t.Fatalf("timestamps created_at=%q updated_at=%q", got.CreatedAt, got.UpdatedAt)
	}
	raw := s.Must(http.StatusOK, "GET", "/threads/"+th.ThreadID, nil).Map(t)
	for _, k := range []string{"thread_id", "created_at", "updated_at", "state_updated_at", "metadata", "status",
		"config", "values", "interrupts", "error", "parent_thread_id", "resource_id"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("thread lacks field %q", k)
		}
	}
}

func TestCreateWithIDAndIfExists(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	id := uuid.NewString()
	first := create(t, s, map[string]any{"thread_id": id, "metadata": map[string]any{"v": 1}})
	if first.ThreadID != id {
		t.Fatalf("thread_id = %s, want %s", first.ThreadID, id)
	}
	wantDetail(t, s.Do("POST", "/threads", map[string]any{"thread_id": id}), http.StatusConflict, id, "already exists")
	wantDetail(t, s.Do("POST", "/threads", map[string]any{"thread_id": id, "if_exists": "raise"}), http.StatusConflict)
	again := create(t, s, map[string]any{"thread_id": id, "if_exists": "do_nothing", "metadata": map[string]any{"v": 2}})
	if again.Metadata["v"] != float64(1) || again.CreatedAt != first.CreatedAt {
		t.Fatalf("do_nothing changed the thread: %+v", again)
	}
	wantDetail(t, s.Do("POST", "/threads", map[string]any{"if_exists": "sometimes"}), http.StatusUnprocessableEntity, "if_exists")
}

func TestHierarchyFieldsAreNormalized(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	root := create(t, s, nil)
	c := create(t, s, map[string]any{"parent_thread_id": "  " + root.ThreadID + "\t", "resource_id": "  user-7 "})
	if parentOf(c) != root.ThreadID || c.ResourceID == nil || *c.ResourceID != "user-7" {
		t.Fatalf("not trimmed: parent=%v resource=%v", c.ParentThreadID, c.ResourceID)
	}
	blank := create(t, s, map[string]any{"parent_thread_id": "   ", "resource_id": ""})
	if blank.ParentThreadID != nil || blank.ResourceID != nil {
		t.Fatalf("blank not null: parent=%v resource=%v", blank.ParentThreadID, blank.ResourceID)
	}
	var patched thread
	s.Must(http.StatusOK, "PATCH", "/threads/"+c.ThreadID, map[string]any{"parent_thread_id": " ", "resource_id": "  "}).JSON(t, &patched)
	if patched.ParentThreadID != nil || patched.ResourceID != nil {
		t.Fatalf("blank patch not null: %+v", patched)
	}
}

func TestCreateRejectsBadParents(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	missing := uuid.NewString()
	wantDetail(t, s.Do("POST", "/threads", map[string]any{"parent_thread_id": missing}),
		http.StatusUnprocessableEntity, "Parent thread", missing, "not found")
	self := uuid.NewString()
	wantDetail(t, s.Do("POST", "/threads", map[string]any{"thread_id": self, "parent_thread_id": self}),
		http.StatusUnprocessableEntity, self, "own parent")
	wantDetail(t, s.Do("POST", "/threads", map[string]any{"parent_thread_id": "not-a-uuid"}),
		http.StatusUnprocessableEntity, "parent_thread_id", "UUID")
	var n int
	if err := s.DB.QueryRow(t.Context(), `SELECT count(*) FROM threads`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rejected creates left %d threads (%v)", n, err)
	}
}

func TestPatchMergesMetadataAndReparents(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a, b := create(t, s, nil), create(t, s, nil)
	c := create(t, s, map[string]any{"parent_thread_id": a.ThreadID, "metadata": map[string]any{"x": 1, "y": 1}})

	var p thread
	s.Must(http.StatusOK, "PATCH", "/threads/"+c.ThreadID, map[string]any{"metadata": map[string]any{"y": 2, "z": 3}}).JSON(t, &p)
	if p.Metadata["x"] != float64(1) || p.Metadata["y"] != float64(2) || p.Metadata["z"] != float64(3) {
		t.Fatalf("metadata not merged: %v", p.Metadata)
	}
	if parentOf(p) != a.ThreadID {
		t.Fatalf("absent parent_thread_id changed the parent to %v", p.ParentThreadID)
	}
	if p.UpdatedAt <= c.UpdatedAt {
		t.Fatalf("updated_at not bumped: %s -> %s", c.UpdatedAt, p.UpdatedAt)
	}
	s.Must(http.StatusOK, "PATCH", "/threads/"+c.ThreadID, map[string]any{"parent_thread_id": b.ThreadID}).JSON(t, &p)
	if parentOf(p) != b.ThreadID {
		t.Fatalf("parent = %v, want %s", p.ParentThreadID, b.ThreadID)
	}
	s.Must(http.StatusOK, "PATCH", "/threads/"+c.ThreadID, map[string]any{"parent_thread_id": nil}).JSON(t, &p)
	if p.ParentThreadID != nil {
		t.Fatalf("null parent did not make a root: %v", p.ParentThreadID)
	}
	wantDetail(t, s.Do("PATCH", "/threads/"+uuid.NewString(), map[string]any{}), http.StatusNotFound, "not found")
}

func TestPatchRejectsSelfMissingAndCycles(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a := create(t, s, nil)
	b := child(t, s, a.ThreadID)
	c := child(t, s, b.ThreadID)

	wantDetail(t, s.Do("PATCH", "/threads/"+a.ThreadID, map[string]any{"parent_thread_id": a.ThreadID}),
		http.StatusUnprocessableEntity, a.ThreadID, "own parent")
	missing := uuid.NewString()
	wantDetail(t, s.Do("PATCH", "/threads/"+a.ThreadID, map[string]any{"parent_thread_id": missing}),
		http.StatusUnprocessableEntity, missing, "not found")
	// a → b → c: making c (a grandchild) or b (a child) the parent of a closes a cycle.
	wantDetail(t, s.Do("PATCH", "/threads/"+a.ThreadID, map[string]any{"parent_thread_id": c.ThreadID}),
		http.StatusUnprocessableEntity, c.ThreadID, a.ThreadID, "cycle")
	wantDetail(t, s.Do("PATCH", "/threads/"+a.ThreadID, map[string]any{"parent_thread_id": b.ThreadID}),
		http.StatusUnprocessableEntity, "cycle")
	wantDetail(t, s.Do("PATCH", "/threads/"+a.ThreadID, map[string]any{"parent_thread_id": 5}),
		http.StatusUnprocessableEntity, "parent_thread_id")
	if got := getThread(t, s, a.ThreadID); got.ParentThreadID != nil {
		t.Fatalf("rejected patches changed a's parent to %v", *got.ParentThreadID)
	}
	// Moving a subtree sideways is fine: c under a directly.
	var p thread
	s.Must(http.StatusOK, "PATCH", "/threads/"+c.ThreadID, map[string]any{"parent_thread_id": a.ThreadID}).JSON(t, &p)
	if parentOf(p) != a.ThreadID {
		t.Fatalf("c's parent = %v", p.ParentThreadID)
	}
}

func TestDeleteReject(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a := create(t, s, nil)
	b := child(t, s, a.ThreadID)
	wantDetail(t, s.Do("DELETE", "/threads/"+a.ThreadID+"?strategy=reject", nil), http.StatusConflict, a.ThreadID, "child")
	if got := getThread(t, s, b.ThreadID); parentOf(got) != a.ThreadID {
		t.Fatalf("rejected delete touched the child: %+v", got)
	}
	getThread(t, s, a.ThreadID)
	s.Must(http.StatusNoContent, "DELETE", "/threads/"+b.ThreadID+"?strategy=reject", nil)
	s.Must(http.StatusNoContent, "DELETE", "/threads/"+a.ThreadID+"?strategy=reject", nil)
	s.Must(http.StatusNotFound, "GET", "/threads/"+a.ThreadID, nil)
}

func TestDeleteDetachIsTheDefault(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	for _, query := range []string{"", "?strategy=detach"} {
		a := create(t, s, nil)
		b1, b2 := child(t, s, a.ThreadID), child(t, s, a.ThreadID)
		g := child(t, s, b1.ThreadID)
		r := s.Must(http.StatusNoContent, "DELETE", "/threads/"+a.ThreadID+query, nil)
		if len(r.Body) != 0 {
			t.Fatalf("204 with body %q", r.Body)
		}
		s.Must(http.StatusNotFound, "GET", "/threads/"+a.ThreadID, nil)
		for _, id := range []string{b1.ThreadID, b2.ThreadID} {
			if got := getThread(t, s, id); got.ParentThreadID != nil {
				t.Fatalf("%q: child %s still has parent %s", query, id, *got.ParentThreadID)
			}
		}
		if got := getThread(t, s, g.ThreadID); parentOf(got) != b1.ThreadID {
			t.Fatalf("%q: grandchild lost its parent: %v", query, got.ParentThreadID)
		}
	}
}

func TestDeleteCascadeRemovesTheSubtreeOnly(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	top := create(t, s, nil)
	a := child(t, s, top.ThreadID)
	sibling := child(t, s, top.ThreadID)
	b := child(t, s, a.ThreadID)
	c := child(t, s, b.ThreadID)
	d := child(t, s, a.ThreadID)
	s.Must(http.StatusNoContent, "DELETE", "/threads/"+a.ThreadID+"?strategy=cascade", nil)
	for _, id := range []string{a.ThreadID, b.ThreadID, c.ThreadID, d.ThreadID} {
		s.Must(http.StatusNotFound, "GET", "/threads/"+id, nil)
	}
	if got := getThread(t, s, sibling.ThreadID); parentOf(got) != top.ThreadID {
		t.Fatalf("sibling changed: %+v", got)
	}
	getThread(t, s, top.ThreadID)
}

func TestDeleteErrors(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a := create(t, s, nil)
	wantDetail(t, s.Do("DELETE", "/threads/"+a.ThreadID+"?strategy=explode", nil), http.StatusUnprocessableEntity, "strategy")
	getThread(t, s, a.ThreadID)
	wantDetail(t, s.Do("DELETE", "/threads/"+uuid.NewString(), nil), http.StatusNotFound)
	wantDetail(t, s.Do("DELETE", "/threads/zzz", nil), http.StatusUnprocessableEntity, "must be a UUID")
}

func TestChildren(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	a := create(t, s, nil)
	var want []string
	for range 3 {
		want = append(want, child(t, s, a.ThreadID).ThreadID)
	}
	g := child(t, s, want[0]) // a grandchild is not a direct child
	_ = g
	var got []thread
	r := s.Must(http.StatusOK, "GET", "/threads/"+a.ThreadID+"/children?limit=2", nil)
	r.JSON(t, &got)
	if len(got) != 2 || got[0].ThreadID != want[0] || got[1].ThreadID != want[1] || r.Header.Get("X-Pagination-Next") != "2" {
		t.Fatalf("page 1 = %v next=%q", got, r.Header.Get("X-Pagination-Next"))
	}
	s.Must(http.StatusOK, "GET", "/threads/"+a.ThreadID+"/children?offset=2", nil).JSON(t, &got)
	if len(got) != 1 || got[0].ThreadID != want[2] {
		t.Fatalf("page 2 = %v", got)
	}
	s.Must(http.StatusNotFound, "GET", "/threads/"+uuid.NewString()+"/children", nil)
	s.Must(http.StatusUnprocessableEntity, "GET", "/threads/"+a.ThreadID+"/children?limit=0", nil)
}

func ids(list []thread) []string {
	out := make([]string, len(list))
	for i, t := range list {
		out[i] = t.ThreadID
	}
	return out
}

func TestSearchAndCount(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	root := create(t, s, map[string]any{"metadata": map[string]any{"graph_id": "agent", "team": "red"}})
	k1 := create(t, s, map[string]any{"parent_thread_id": root.ThreadID, "metadata": map[string]any{"graph_id": "agent"}})
	k2 := create(t, s, map[string]any{"parent_thread_id": root.ThreadID, "metadata": map[string]any{"graph_id": "other"}, "resource_id": "u1"})
	other := create(t, s, map[string]any{"metadata": map[string]any{"graph_id": "other", "team": "red"}})

	search := func(body map[string]any) ([]thread, *servertest.Response) {
		t.Helper()
		var list []thread
		r := s.Must(http.StatusOK, "POST", "/threads/search", body)
		r.JSON(t, &list)
		return list, r
	}
	// Default order: updated_at desc → newest first.
	list, r := search(map[string]any{})
	if got := ids(list); fmt.Sprint(got) != fmt.Sprint([]string{other.ThreadID, k2.ThreadID, k1.ThreadID, root.ThreadID}) {
		t.Fatalf("default order = %v", got)
	}
	if r.Header.Get("X-Pagination-Total") != "4" || r.Header.Get("X-Pagination-Next") != "" {
		t.Fatalf("headers total=%q next=%q", r.Header.Get("X-Pagination-Total"), r.Header.Get("X-Pagination-Next"))
	}
	list, _ = search(map[string]any{"metadata": map[string]any{"graph_id": "agent"}})
	if got := ids(list); len(got) != 2 || got[0] != k1.ThreadID || got[1] != root.ThreadID {
		t.Fatalf("metadata filter = %v", got)
	}
	list, _ = search(map[string]any{"metadata": map[string]any{"graph_id": "other", "team": "red"}})
	if got := ids(list); len(got) != 1 || got[0] != other.ThreadID {
		t.Fatalf("metadata containment of two keys = %v", got)
	}
	list, _ = search(map[string]any{"parent_thread_id": root.ThreadID, "sort_by": "created_at", "sort_order": "asc"})
	if got := ids(list); len(got) != 2 || got[0] != k1.ThreadID || got[1] != k2.ThreadID {
		t.Fatalf("children search = %v", got)
	}
	list, _ = search(map[string]any{"root_only": true})
	if got := ids(list); len(got) != 2 || got[0] != other.ThreadID || got[1] != root.ThreadID {
		t.Fatalf("root_only = %v", got)
	}
	list, _ = search(map[string]any{"ids": []string{k2.ThreadID, other.ThreadID}, "sort_by": "created_at", "sort_order": "asc"})
	if got := ids(list); len(got) != 2 || got[0] != k2.ThreadID || got[1] != other.ThreadID {
		t.Fatalf("ids filter = %v", got)
	}
	list, _ = search(map[string]any{"resource_id": "u1"})
	if got := ids(list); len(got) != 1 || got[0] != k2.ThreadID {
		t.Fatalf("resource filter = %v", got)
	}
	list, _ = search(map[string]any{"status": "busy"})
	if len(list) != 0 {
		t.Fatalf("status busy = %v", ids(list))
	}
	// Paging: limit 3 → next 3; page 2 has the last one.
	list, r = search(map[string]any{"limit": 3})
	if len(list) != 3 || r.Header.Get("X-Pagination-Next") != "3" || r.Header.Get("X-Pagination-Total") != "4" {
		t.Fatalf("page 1: %d rows, next=%q total=%q", len(list), r.Header.Get("X-Pagination-Next"), r.Header.Get("X-Pagination-Total"))
	}
	list, r = search(map[string]any{"limit": 3, "offset": 3})
	if len(list) != 1 || list[0].ThreadID != root.ThreadID || r.Header.Get("X-Pagination-Next") != "" {
		t.Fatalf("page 2: %v next=%q", ids(list), r.Header.Get("X-Pagination-Next"))
	}
	// select projects fields.
	var projected []map[string]any
	s.Must(http.StatusOK, "POST", "/threads/search", map[string]any{"select": []string{"thread_id", "status"}, "limit": 1}).JSON(t, &projected)
	if len(projected) != 1 || len(projected[0]) != 2 || projected[0]["status"] != "idle" {
		t.Fatalf("select = %v", projected)
	}
	for _, bad := range []map[string]any{
		{"sort_by": "colour"}, {"sort_order": "sideways"}, {"select": []string{"password"}}, {"limit": 0.5},
		{"limit": 5000}, {"offset": -1}, {"status": "asleep"}, {"ids": []string{"x"}},
		{"root_only": true, "parent_thread_id": root.ThreadID}, {"metadata": "graph_id=agent"},
	} {
		if r := s.Do("POST", "/threads/search", bad); r.Status != http.StatusUnprocessableEntity {
			t.Errorf("search %v: status %d, want 422 (%s)", bad, r.Status, r.Body)
		}
	}

	count := func(body any) int {
		t.Helper()
		var n int
		s.Must(http.StatusOK, "POST", "/threads/count", body).JSON(t, &n)
		return n
	}
	if n := count(nil); n != 4 {
		t.Fatalf("count all = %d", n)
	}
	if n := count(map[string]any{"metadata": map[string]any{"team": "red"}}); n != 2 {
		t.Fatalf("count team=red = %d", n)
	}
	if n := count(map[string]any{"parent_thread_id": root.ThreadID, "metadata": map[string]any{"graph_id": "other"}}); n != 1 {
		t.Fatalf("count children of root with graph other = %d", n)
	}
	if n := count(map[string]any{"status": "idle", "root_only": true}); n != 2 {
		t.Fatalf("count idle roots = %d", n)
	}
}
