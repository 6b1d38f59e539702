package server_test

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

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

// The test-only WEFT_TEST_CRON_SPEED runs the crons' clock faster than real
// time and shortens their interval; unset, crons use the database's now().
// WEFT_TEST_CRON_INTERVAL shortens the interval alone.
func TestParseConfigCronSpeed(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := server.ParseConfig(nil, getenv, io.Discard)
	if err != nil || c.CronClock != nil || c.CronInterval != 0 {
		t.Fatalf("default: clock set %v, interval %v, err %v; want no clock, the default interval", c.CronClock != nil, c.CronInterval, err)
	}
	env["WEFT_TEST_CRON_SPEED"] = "600"
	if c, err = server.ParseConfig(nil, getenv, io.Discard); err != nil || c.CronClock == nil {
		t.Fatalf("speed 600: %v", err)
	}
	if c.CronInterval != 20*time.Millisecond {
		t.Errorf("interval = %v, want 20ms", c.CronInterval)
	}
	a := c.CronClock()
	time.Sleep(50 * time.Millisecond)
	if d := c.CronClock().Sub(a); d < 25*time.Second {
		t.Errorf("50ms at speed 600 moved the clock %v, want >= 30s", d)
	}
	for _, bad := range []string{"0", "-1", "fast", "3601"} {
		env["WEFT_TEST_CRON_SPEED"] = bad
		if _, err := server.ParseConfig(nil, getenv, io.Discard); err == nil {
			t.Errorf("WEFT_TEST_CRON_SPEED=%q accepted", bad)
		}
	}
	// WEFT_TEST_CRON_INTERVAL sets the interval alone: the clock stays the database's.
	env = map[string]string{"WEFT_TEST_CRON_INTERVAL": "5ms"}
	if c, err = server.ParseConfig(nil, getenv, io.Discard); err != nil || c.CronClock != nil || c.CronInterval != 5*time.Millisecond {
		t.Fatalf("interval 5ms: clock set %v, interval %v, err %v", c.CronClock != nil, c.CronInterval, err)
	}
	for _, bad := range []string{"0", "500us", "2m", "soon"} {
		env["WEFT_TEST_CRON_INTERVAL"] = bad
		if _, err := server.ParseConfig(nil, getenv, io.Discard); err == nil {
			t.Errorf("WEFT_TEST_CRON_INTERVAL=%q accepted", bad)
		}
	}
	// WEFT_TEST_CRON_BATCH: how many due crons a transaction fires.
	env = map[string]string{"WEFT_TEST_CRON_BATCH": "3"}
	if c, err = server.ParseConfig(nil, getenv, io.Discard); err != nil || c.CronBatch != 3 {
		t.Fatalf("batch 3: %d, err %v", c.CronBatch, err)
	}
	for _, bad := range []string{"0", "1001", "many"} {
		env["WEFT_TEST_CRON_BATCH"] = bad
		if _, err := server.ParseConfig(nil, getenv, io.Discard); err == nil {
			t.Errorf("WEFT_TEST_CRON_BATCH=%q accepted", bad)
		}
	}
}

// -metrics-addr and WEFT_METRICS_ADDR set the metrics listener; the OTEL_*
// variables turn tracing on only when they name an exporter or an
// endpoint, and an exporter or protocol Weft lacks is refused at start.
func TestParseConfigObservability(t *testing.T) {
	t.Parallel()
	parse := func(args []string, env map[string]string) (server.Config, error) {
		return server.ParseConfig(args, func(k string) string { return env[k] }, io.Discard)
	}
	c, err := parse(nil, nil)
	if err != nil || c.MetricsAddr != "" || c.Tracing.On() {
		t.Fatalf("defaults: metrics %q tracing %v (%v)", c.MetricsAddr, c.Tracing.On(), err)
	}
	if c, _ = parse(nil, map[string]string{"WEFT_METRICS_ADDR": "127.0.0.1:9090"}); c.MetricsAddr != "127.0.0.1:9090" {
		t.Fatalf("env: %q", c.MetricsAddr)
	}
	if c, _ = parse([]string{"-metrics-addr", ":9091"}, map[string]string{"WEFT_METRICS_ADDR": "x"}); c.MetricsAddr != ":9091" {
		t.Fatalf("flag: %q", c.MetricsAddr)
	}
	for env, on := range map[string]bool{
		"OTEL_SERVICE_NAME=svc":                                      false,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318":          true,
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://c:4318/v1/traces": true,
		"OTEL_TRACES_EXPORTER=otlp":                                  true,
		"OTEL_TRACES_EXPORTER=none":                                  false,
		"OTEL_SDK_DISABLED=true":                                     false,
	} {
		k, v, _ := strings.Cut(env, "=")
		m := map[string]string{k: v}
		if k == "OTEL_TRACES_EXPORTER" || k == "OTEL_SDK_DISABLED" {
			m["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4318"
		}
		c, err := parse(nil, m)
		if err != nil || c.Tracing.On() != on {
			t.Errorf("%v: tracing %v (%v), want %v", m, c.Tracing.On(), err, on)
		}
	}
	for _, m := range []map[string]string{{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, {"OTEL_SDK_DISABLED": "maybe"}} {
		if _, err := parse(nil, m); err == nil {
			t.Errorf("%v accepted", m)
		}
	}
}

// -store-index / WEFT_STORE_INDEX take langgraph.json's store.index.
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

func TestParseConfigEncryption(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	c, err := server.ParseConfig(nil, getenv, io.Discard)
	if err != nil || c.Keyring != nil {
		t.Fatalf("no key: %v %v", c.Keyring, err)
	}
	env["LANGGRAPH_AES_KEY"] = "0123456789abcdef"
	env["WEFT_AES_OLD_KEYS"] = "fedcba9876543210fedcba9876543210"
	if c, err = server.ParseConfig(nil, getenv, io.Discard); err != nil || c.Keyring.Keys() != 2 {
		t.Fatalf("keys: %v %v", c.Keyring, err)
	}
	for _, bad := range []map[string]string{
		{"LANGGRAPH_AES_KEY": "too-short"},
		{"LANGGRAPH_AES_KEY": "0123456789abcdef", "WEFT_AES_OLD_KEYS": "short"},
		{"WEFT_AES_OLD_KEYS": "0123456789abcdef"},
	} {
		env = bad
		if _, err := server.ParseConfig(nil, getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "encryption") {
			t.Errorf("%v: err = %v", bad, err)
		}
	}
}
