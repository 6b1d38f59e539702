package projectauth

import (
	"reflect"
	"testing"

	"github.com/weftdev/weft/internal/auth"
)

// The value and action a handler gets, as LangGraph's server names them.
func TestValueAndAction(t *testing.T) {
	cases := []struct {
		req    auth.Request
		action string
		value  map[string]any
	}{
		{auth.Request{Resource: "threads", Action: "read", ID: "t1", Path: "/threads/t1"}, "read", map[string]any{"thread_id": "t1"}},
		{auth.Request{Resource: "threads", Action: "create", Path: "/threads", Body: []byte(`{"metadata":{"a":1}}`)}, "create",
			map[string]any{"metadata": map[string]any{"a": float64(1)}}},
		{auth.Request{Resource: "assistants", Action: "update", ID: "a1", Path: "/assistants/a1", Body: []byte(`{}`)}, "update",
			map[string]any{"assistant_id": "a1"}},
		{auth.Request{Resource: "store", Action: "read", Path: "/store/items", Query: "namespace=a.b&key=k"}, "get",
			map[string]any{"namespace": []any{"a", "b"}, "key": "k"}},
		{auth.Request{Resource: "store", Action: "update", Path: "/store/items", Body: []byte(`{"namespace":["a"],"key":"k"}`)}, "put",
			map[string]any{"namespace": []any{"a"}, "key": "k"}},
		{auth.Request{Resource: "store", Action: "search", Path: "/store/items/search", Body: []byte(`{"namespace_prefix":["a"]}`)}, "search",
			map[string]any{"namespace_prefix": []any{"a"}, "namespace": []any{"a"}}},
		{auth.Request{Resource: "store", Action: "search", Path: "/store/namespaces", Body: []byte(`{"prefix":["a"]}`)}, "list_namespaces",
			map[string]any{"prefix": []any{"a"}, "namespace": []any{"a"}}},
	}
	for _, c := range cases {
		if a := action(c.req); a != c.action {
			t.Errorf("%s %s: action %q, want %q", c.req.Resource, c.req.Path, a, c.action)
		}
		if v := valueOf(c.req); !reflect.DeepEqual(v, c.value) {
			t.Errorf("%s %s: value %#v, want %#v", c.req.Resource, c.req.Path, v, c.value)
		}
	}
}

func TestPath(t *testing.T) {
	if p := Path([]byte(`{"graphs":{},"auth":{"path":"./auth.mts:auth"}}`)); p != "./auth.mts:auth" {
		t.Fatalf("Path %q", p)
	}
	if p := Path([]byte(`{"graphs":{}}`)); p != "" {
		t.Fatalf("Path %q", p)
	}
}
