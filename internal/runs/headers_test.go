package runs

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/weftdev/weft/graph"
)

func TestHeaderPolicy(t *testing.T) {
	h := http.Header{}
	for k, v := range map[string]string{"X-Caller": "ada", "X-Trace-Id": "t1", "User-Agent": "ua", "Accept": "*/*",
		"X-Api-Key": "secret", "Authorization": "Bearer s", "X-Weft-Pass": "p", "Cookie": "c"} {
		h.Set(k, v)
	}
	for _, c := range []struct {
		name     string
		policy   HeaderPolicy
		language string
		want     map[string]any
	}{
		{"default: x-* and user-agent", HeaderPolicy{}, "", map[string]any{"x-caller": "ada", "x-trace-id": "t1", "user-agent": "ua"}},
		{"default of a Python graph: none", HeaderPolicy{}, graph.LanguagePython, map[string]any{}},
		{"includes", HeaderPolicy{Includes: []string{"x-caller", "accept", "authorization"}}, "", map[string]any{"x-caller": "ada", "accept": "*/*"}},
		{"includes, Python", HeaderPolicy{Includes: []string{"x-caller"}}, graph.LanguagePython, map[string]any{"x-caller": "ada"}},
		{"excludes", HeaderPolicy{Excludes: []string{"x-trace-*"}}, "", map[string]any{"x-caller": "ada", "user-agent": "ua"}},
		{"both", HeaderPolicy{Includes: []string{"x-*"}, Excludes: []string{"x-caller"}}, "", map[string]any{"x-trace-id": "t1"}},
	} {
		got := c.policy.apply(map[string]any{"configurable": map[string]any{"x-caller": "body", "kept": 1}}, h, c.language)
		want := map[string]any{"kept": 1}
		if _, ok := c.want["x-caller"]; !ok {
			want["x-caller"] = "body"
		}
		for k, v := range c.want {
			want[k] = v
		}
		if !reflect.DeepEqual(got["configurable"], want) {
			t.Errorf("%s: %v, want %v", c.name, got["configurable"], want)
		}
	}
	if err := (HeaderPolicy{Includes: []string{"x-[a]"}}).Check(); err == nil {
		t.Error("a pattern with [ ] was accepted")
	}
}
