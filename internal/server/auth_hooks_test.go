package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/auth"
	"github.com/weftdev/weft/internal/postgres/pgtest"
	"github.com/weftdev/weft/internal/server"
	"github.com/weftdev/weft/internal/server/servertest"
)

// A Go program's hooks: its Authenticate names the user from a header of
// its own; its Authorize denies deleting threads to "carol" and restricts
// everyone to the threads whose metadata names them as owner.
func TestAuthHooks(t *testing.T) {
	t.Parallel()
	s := startWithHooks(t)
	srv := s.URL
	as := func(user string) []string { return []string{"X-User", user} }

	mustStatus(t, call(t, srv, "POST", "/threads/search", nil), 401, "no user")
	r := call(t, srv, "POST", "/threads/search", nil, as("mallory")...)
	mustStatus(t, r, 503, "hook's own error status")
	mustStatus(t, call(t, srv, "POST", "/threads/search", nil, as("broken")...), 500, "hook failing")

	// Creating stamps the owner into the metadata, over what the client sent.
	var alice, bob struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
	}
	r = call(t, srv, "POST", "/threads", map[string]any{"metadata": map[string]any{"owner": "bob", "topic": "x"}}, as("alice")...)
	mustStatus(t, r, 200, "alice creates")
	decode(t, r, &alice)
	if alice.Metadata["owner"] != "alice" || alice.Metadata["topic"] != "x" {
		t.Fatalf("alice's thread metadata = %v", alice.Metadata)
	}
	decode(t, mustOK(t, call(t, srv, "POST", "/threads", map[string]any{"metadata": map[string]any{"topic": "x"}}, as("bob")...)), &bob)

	// Bob sees his thread only: another's is 404 on every thread route.
	aliceT := "/threads/" + alice.ThreadID
	mustStatus(t, call(t, srv, "GET", aliceT, nil, as("bob")...), 404, "bob gets alice's thread")
	mustStatus(t, call(t, srv, "PATCH", aliceT, map[string]any{"metadata": map[string]any{"owner": "bob"}}, as("bob")...), 404, "bob patches it")
	mustStatus(t, call(t, srv, "DELETE", aliceT, nil, as("bob")...), 404, "bob deletes it")
	mustStatus(t, call(t, srv, "GET", aliceT+"/state", nil, as("bob")...), 404, "bob reads its state")
	mustStatus(t, call(t, srv, "POST", aliceT+"/runs", map[string]any{"assistant_id": "foo_bar"}, as("bob")...), 404, "bob runs on it")
	mustStatus(t, call(t, srv, "GET", aliceT, nil, as("alice")...), 200, "alice gets hers")
	mustStatus(t, call(t, srv, "GET", "/threads/"+bob.ThreadID, nil, as("bob")...), 200, "bob gets his")

	var found []struct {
		ThreadID string `json:"thread_id"`
	}
	decode(t, mustOK(t, call(t, srv, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"topic": "x"}}, as("bob")...)), &found)
	if len(found) != 1 || found[0].ThreadID != bob.ThreadID {
		t.Fatalf("bob's search = %v, want his thread only", found)
	}
	// A search naming another owner contradicts the filter: nothing.
	decode(t, mustOK(t, call(t, srv, "POST", "/threads/search", map[string]any{"metadata": map[string]any{"owner": "alice"}}, as("bob")...)), &found)
	if len(found) != 0 {
		t.Fatalf("bob searching alice's threads = %v, want none", found)
	}
	r = mustOK(t, call(t, srv, "POST", "/threads/count", map[string]any{}, as("bob")...))
	if strings.TrimSpace(string(r.body)) != "1" {
		t.Fatalf("bob's count = %s, want 1", r.body)
	}
	r = mustOK(t, call(t, srv, "POST", "/threads/count", map[string]any{"metadata": map[string]any{"owner": "alice"}}, as("bob")...))
	if strings.TrimSpace(string(r.body)) != "0" {
		t.Fatalf("bob's count of alice's = %s, want 0", r.body)
	}
	// Children: only the matching ones.
	var child struct {
		ThreadID string `json:"thread_id"`
	}
	decode(t, mustOK(t, call(t, srv, "POST", "/threads", map[string]any{"parent_thread_id": bob.ThreadID}, as("bob")...)), &child)
	if _, err := s.DB.Exec(context.Background(), `INSERT INTO threads (thread_id, parent_thread_id, metadata)
		VALUES (gen_random_uuid(), $1, '{"owner":"alice"}')`, bob.ThreadID); err != nil {
		t.Fatal(err)
	}
	decode(t, mustOK(t, call(t, srv, "GET", "/threads/"+bob.ThreadID+"/children", nil, as("bob")...)), &found)
	if len(found) != 1 || found[0].ThreadID != child.ThreadID {
		t.Fatalf("bob's children = %v, want his child only", found)
	}

	// Deny: 403 with the hook's reason, nothing deleted.
	var carol struct {
		ThreadID string `json:"thread_id"`
	}
	decode(t, mustOK(t, call(t, srv, "POST", "/threads", nil, as("carol")...)), &carol)
	r = call(t, srv, "DELETE", "/threads/"+carol.ThreadID, nil, as("carol")...)
	mustStatus(t, r, 403, "carol deletes")
	if d := r.detail(t); d != "carol may not delete threads" {
		t.Fatalf("deny detail %q", d)
	}
	mustStatus(t, call(t, srv, "GET", "/threads/"+carol.ThreadID, nil, as("carol")...), 200, "carol's thread is still there")
	mustStatus(t, call(t, srv, "DELETE", "/threads/"+bob.ThreadID+"?strategy=cascade", nil, as("bob")...), 204, "bob deletes his")

	// Assistants hold filters too: a search lists only those whose
	// metadata contains them (none of the system assistants), a read of
	// another is a 404.
	r = call(t, srv, "POST", "/assistants/search", nil, as("bob")...)
	mustStatus(t, r, 200, "assistants search under filters")
	if b := strings.TrimSpace(string(r.body)); b != "[]" {
		t.Fatalf("assistants search under filters: %s", b)
	}
	mustStatus(t, call(t, srv, "GET", "/assistants/foo_bar", nil, as("bob")...), 404, "assistant outside the filters")
	// Filters on a route that cannot apply them: refused, not ignored.
	r = call(t, srv, "GET", "/store/items?namespace=a&key=b", nil, as("bob")...)
	mustStatus(t, r, 403, "store under filters")
	if d := r.detail(t); !strings.Contains(d, "filters") {
		t.Fatalf("detail %q", d)
	}
	// Scopes still apply to a hook's principal: dave has none.
	mustStatus(t, call(t, srv, "POST", "/threads/search", nil, as("dave")...), 403, "principal without scopes")
}

// startWithHooks runs a server with TestAuthHooks' hooks.
func startWithHooks(t *testing.T) *servertest.Server {
	return servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Authenticate = func(r *http.Request) (auth.Principal, error) {
			user := r.Header.Get("X-User")
			switch user {
			case "":
				return auth.Principal{}, auth.Unauthorized("who are you? send X-User")
			case "mallory":
				return auth.Principal{}, &auth.Error{Status: http.StatusServiceUnavailable, Detail: "directory down"}
			case "broken":
				return auth.Principal{}, errors.New("the directory failed")
			case "dave":
				return auth.Principal{Identity: user, Tenant: "t1"}, nil
			}
			return auth.Principal{Identity: user, Tenant: "t1", Scopes: []string{auth.ScopeTenant}}, nil
		}
		c.Authorize = func(ctx context.Context, req auth.Request) (auth.Decision, error) {
			if req.Principal.Identity == "carol" && req.Resource == "threads" && req.Action == "delete" {
				return auth.Deny("carol may not delete threads"), nil
			}
			return auth.Filter(map[string]any{"owner": req.Principal.Identity}), nil
		}
	})
}

func mustOK(t *testing.T, r authResp) authResp {
	t.Helper()
	mustStatus(t, r, 200, "request")
	return r
}

func decode(t *testing.T, r authResp, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// A hook that sets body fields (Decision.Body) rewrites the body through a
// map: the client's other fields, numbers included, must come through as
// sent, and a body with a repeated key
// must still be refused (a map would keep one of the two silently).
func TestAuthHookBodyRewrite(t *testing.T) {
	t.Parallel()
	s := servertest.StartWith(t, pgtest.DSN(t), func(c *server.Config) {
		c.Authenticate = func(r *http.Request) (auth.Principal, error) {
			return auth.Principal{Identity: "ann", Tenant: "t1", Scopes: []string{auth.ScopeTenant}}, nil
		}
		c.Authorize = func(ctx context.Context, req auth.Request) (auth.Decision, error) {
			if req.Resource == "threads" && req.Action == "create" {
				return auth.Decision{Body: map[string]any{"if_exists": "raise"}}, nil
			}
			return auth.Allow(), nil
		}
	})
	for _, body := range []string{
		`{"thread_id":"` + uuidA + `","thread_id":"` + uuidF + `"}`,
		`{"metadata":{"k":1},"if_exists":"raise","if_exists":"do_nothing"}`,
		`{"thread_id":"` + uuidA + `","Thread_ID":"` + uuidF + `"}`,
	} {
		r := rawCall(t, s.URL, "POST", "/threads", body)
		if r.status != http.StatusUnprocessableEntity {
			t.Fatalf("POST /threads %s through a body-setting hook: %d %s, want 422", body, r.status, r.body)
		}
	}
	for _, id := range []string{uuidA, uuidF} {
		mustStatus(t, call(t, s.URL, "GET", "/threads/"+id, nil), 404, "a thread of a refused body")
	}
	r := mustOK(t, rawCall(t, s.URL, "POST", "/threads", `{"metadata":{"big":12345678901234567890}}`))
	if !strings.Contains(string(r.body), `"big":12345678901234567890`) {
		t.Fatalf("thread created through the rewritten body %s: the number was not kept as sent", r.body)
	}
}

const (
	uuidA = "aaaaaaaa-0000-4000-8000-000000000001"
	uuidF = "ffffffff-0000-4000-8000-000000000001"
)

func rawCall(t *testing.T, base, method, path, body string) authResp {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return authResp{status: resp.StatusCode, body: b}
}
