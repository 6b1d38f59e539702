package auth

import (
	"net/http"
	"reflect"
	"testing"
)

func TestContains(t *testing.T) {
	doc := map[string]any{"owner": "alice", "n": 1, "tags": []any{"a", "b"}, "org": map[string]any{"id": "x", "tier": "pro"}}
	for _, c := range []struct {
		f    map[string]any
		want bool
	}{
		{nil, true},
		{map[string]any{"owner": "alice"}, true},
		{map[string]any{"owner": "bob"}, false},
		{map[string]any{"n": 1.0}, true},
		{map[string]any{"n": int64(1)}, true},
		{map[string]any{"n": "1"}, false},
		{map[string]any{"tags": []string{"b"}}, true},
		{map[string]any{"tags": []string{"c"}}, false},
		{map[string]any{"org": map[string]any{"id": "x"}}, true},
		{map[string]any{"org": map[string]any{"id": "y"}}, false},
		{map[string]any{"missing": nil}, false},
	} {
		if got := Contains(doc, c.f); got != c.want {
			t.Errorf("Contains(%v) = %v, want %v", c.f, got, c.want)
		}
	}
	if Contains(nil, map[string]any{"owner": "alice"}) {
		t.Error("nil metadata contains a filter")
	}
}

func TestMergeFilters(t *testing.T) {
	m, ok := MergeFilters(map[string]any{"topic": "x", "org": map[string]any{"id": "1"}}, map[string]any{"owner": "a", "org": map[string]any{"tier": "pro"}})
	want := map[string]any{"topic": "x", "owner": "a", "org": map[string]any{"id": "1", "tier": "pro"}}
	if !ok || !reflect.DeepEqual(m, want) {
		t.Fatalf("merge = %v %v", m, ok)
	}
	if _, ok := MergeFilters(map[string]any{"owner": "b"}, map[string]any{"owner": "a"}); ok {
		t.Fatal("contradicting filters merged")
	}
	if m, ok := MergeFilters(map[string]any{"owner": "a"}, map[string]any{"owner": "a"}); !ok || m["owner"] != "a" {
		t.Fatalf("equal filters: %v %v", m, ok)
	}
	if s := Stamp(map[string]any{"owner": "b", "k": 1}, map[string]any{"owner": "a"}); s["owner"] != "a" || s["k"] != 1.0 {
		t.Fatalf("stamp = %v", s)
	}
}

func TestScopes(t *testing.T) {
	if s, err := ParseScopes("tenant, worker,tenant"); err != nil || !reflect.DeepEqual(s, []string{"tenant", "worker"}) {
		t.Fatalf("ParseScopes = %v %v", s, err)
	}
	for _, bad := range []string{"", "root", "tenant,everything"} {
		if _, err := ParseScopes(bad); err == nil {
			t.Errorf("ParseScopes(%q) accepted", bad)
		}
	}
	p := Principal{Scopes: []string{ScopeTenant}}
	if !p.Has(ScopeThreads) || !p.Has(ScopeStore) || p.Has(ScopeWorker) || p.Has(ScopeAdmin) {
		t.Fatal("tenant scope covers exactly tenant data")
	}
	if (Principal{Scopes: []string{ScopeAdmin}}).Has(ScopeThreads) {
		t.Fatal("admin implies tenant data")
	}
}

func TestCredential(t *testing.T) {
	for _, c := range []struct {
		h    map[string]string
		want string
	}{
		{map[string]string{"X-Api-Key": "k1"}, "k1"},
		{map[string]string{"Authorization": "Bearer k2"}, "k2"},
		{map[string]string{"Authorization": "bearer  k3 "}, "k3"},
		{map[string]string{"X-Api-Key": "k1", "Authorization": "Bearer k2"}, "k1"},
		{map[string]string{"Authorization": "Basic k4"}, ""},
		{nil, ""},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		for k, v := range c.h {
			r.Header.Set(k, v)
		}
		if got := Credential(r); got != c.want {
			t.Errorf("Credential(%v) = %q, want %q", c.h, got, c.want)
		}
	}
}

func TestParseJWKS(t *testing.T) {
	if _, err := ParseJWKS([]byte(`{"keys":[{"kty":"RSA","kid":"small","n":"AQAB","e":"AQAB"}]}`)); err == nil {
		t.Fatal("a tiny RSA key was accepted")
	}
	keys, err := ParseJWKS([]byte(`{"keys":[{"kty":"oct","kid":"hmac","k":"c2VjcmV0"},{"kty":"RSA","kid":"enc","use":"enc","n":"AQAB","e":"AQAB"}]}`))
	if err != nil || len(keys) != 0 {
		t.Fatalf("symmetric and encryption keys: %v %v, want skipped", keys, err)
	}
	if _, err := ParseJWKS([]byte(`{"keys":[{"kty":"EC","kid":"bad","crv":"P-256","x":"AAAA","y":"AAAA"}]}`)); err == nil {
		t.Fatal("a malformed EC key was accepted")
	}
}
