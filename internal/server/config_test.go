package server_test

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/weftdev/weft/internal/server"
)

func TestParseConfigSecurity(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := server.ParseConfig(nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.CORSOrigins != nil || c.AllowedHosts != nil {
		t.Fatalf("defaults: origins %v hosts %v; want none (loopback only)", c.CORSOrigins, c.AllowedHosts)
	}
	env = map[string]string{"WEFT_CORS_ORIGINS": "https://app.example.com, http://10.0.0.5:3000/", "WEFT_ALLOWED_HOSTS": "weft.internal"}
	if c, err = server.ParseConfig(nil, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.CORSOrigins, []string{"https://app.example.com", "http://10.0.0.5:3000/"}) ||
		!slices.Equal(c.AllowedHosts, []string{"weft.internal"}) {
		t.Fatalf("env: origins %v hosts %v", c.CORSOrigins, c.AllowedHosts)
	}
	if c, err = server.ParseConfig([]string{"-cors-origins", "*", "-allowed-hosts", "*"}, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	if sec := c.Security(); !slices.Equal(sec.CORSOrigins, []string{"*"}) || !slices.Equal(sec.AllowedHosts, []string{"*"}) {
		t.Fatalf("flags: %+v", sec)
	}
	for _, bad := range [][]string{{"-cors-origins", "example.com"}, {"-cors-origins", "https://a.example/path"},
		{"-allowed-hosts", "http://a.example"}, {"-allowed-hosts", "a.example:8123"}} {
		env = map[string]string{}
		if _, err := server.ParseConfig(bad, getenv, io.Discard); err == nil {
			t.Errorf("ParseConfig(%v) accepted", bad)
		}
	}
}

// A stray positional argument is an error, never a silent stop of flag
// parsing (flag stops at the first non-flag: "-workers 0" after it would be
// ignored).
func TestParseConfigRejectsStrayArguments(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	for _, args := range [][]string{{"foo"}, {"foo", "-workers", "0"}, {"-workers", "0", "bar"}} {
		var usage strings.Builder
		_, err := server.ParseConfig(args, getenv, &usage)
		if err == nil || !strings.Contains(err.Error(), "unexpected argument") {
			t.Errorf("ParseConfig(%q) = %v, want an unexpected-argument error", args, err)
		}
		if !strings.Contains(usage.String(), "-workers") {
			t.Errorf("ParseConfig(%q) printed no usage: %q", args, usage.String())
		}
	}
}

func TestParseConfigStoreIndex(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := server.ParseConfig(nil, getenv, io.Discard)
	if err != nil || c.StoreIndex != nil {
		t.Fatalf("default: index %+v, %v; want none", c.StoreIndex, err)
	}
	env = map[string]string{"WEFT_STORE_INDEX": `{"dims": 1536, "embed": "openai:text-embedding-3-small"}`, "OPENAI_API_KEY": "sk-x"}
	if c, err = server.ParseConfig(nil, getenv, io.Discard); err != nil {
		t.Fatal(err)
	}
	if ix := c.StoreIndex; ix == nil || ix.Dims != 1536 || ix.APIKey != "sk-x" || !slices.Equal(ix.Fields, []string{"$"}) {
		t.Fatalf("env: %+v", ix)
	}
	// The flag wins over the environment.
	c, err = server.ParseConfig([]string{"-store-index", `{"dims": 4, "embed": "openai:m", "fields": ["text"]}`}, getenv, io.Discard)
	if err != nil || c.StoreIndex.Dims != 4 || !slices.Equal(c.StoreIndex.Fields, []string{"text"}) {
		t.Fatalf("flag: %+v, %v", c.StoreIndex, err)
	}
	for _, bad := range []map[string]string{
		{"WEFT_STORE_INDEX": `{"dims": 4}`, "OPENAI_API_KEY": "k"},
		{"WEFT_STORE_INDEX": `dims=4`, "OPENAI_API_KEY": "k"},
		{"WEFT_STORE_INDEX": `{"dims": 4, "embed": "openai:m"}`},
	} {
		env = bad
		if _, err := server.ParseConfig(nil, getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "store index") {
			t.Errorf("ParseConfig with %v = %v, want a store index error", bad, err)
		}
	}
}
